// One rank of a multi-process SyncBatchNorm test (started by sync_bn_dist_test through
// tests/dist/ddp/rank_spawner with RANK / WORLD_SIZE / MASTER_ADDR / MASTER_PORT).
//
//   sync_bn_probe layer OUT --shape N,C[,...] --split n0,n1,...
//       Every rank builds the same global batch and takes its slice (n_r samples, possibly 0);
//       SyncBatchNorm (explicit group) runs two training forwards and one backward. Each rank
//       compares with plain BatchNorm run here on the whole batch and prints
//       "DIFF <what> <max abs diff>" lines: out, grad_input (its slice), grad_weight and
//       grad_bias (summed over ranks, as DDP would), running_mean, running_var; and
//       "DIFF forward_only_grad_input <x>": the input gradient had the backward used local sums
//       (statistics all-reduced in forward only).
//   sync_bn_probe train OUT --steps K --batch B [--plain-bn]
//       A small conv net with two SyncBatchNorm layers (the default group, as the runner sets
//       it) trained K SGD steps under DDP on per-rank batch B; WORLD_SIZE 1 is the single
//       process reference on the whole batch. Writes parameters and buffers to
//       OUT.rank<r>.final.bin. --plain-bn uses torch::nn::BatchNorm2d instead.
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/nn.h>
#include <torch/optim.h>

#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <vector>

#include "probe_io.h"
#include "worker/dist/ddp.h"
#include "worker/dist/default_process_group.h"
#include "worker/dist/dist_env.h"
#include "worker/dist/process_group.h"
#include "worker/dist/sync_batch_norm.h"
#include "worker/dist/sync_batch_norm_function.h"

namespace {

using ddp3d::dist::ProcessGroup;
using ddp3d::test::parse_probe_args;
using ddp3d::test::ProbeArgs;
using ddp3d::test::write_floats;

std::vector<int64_t> ints(const std::string& csv) {
  std::vector<int64_t> v;
  std::stringstream s(csv);
  for (std::string item; std::getline(s, item, ',');) v.push_back(std::stoll(item));
  return v;
}

std::unique_ptr<ProcessGroup> connect(const ddp3d::dist::DistEnv& env) {
  ddp3d::dist::ProcessGroupOptions opts;
  opts.timeout = std::chrono::seconds(30);
  return ddp3d::dist::init_process_group(env, opts);
}

void all_reduce_sum(ProcessGroup& pg, at::Tensor& t) {
  std::vector<at::Tensor> one{t};
  pg.backend().allreduce(one)->wait();
}

double max_diff(const at::Tensor& a, const at::Tensor& b) {
  if (a.sizes() != b.sizes()) {
    std::ostringstream s;
    s << "shape " << a.sizes() << " vs " << b.sizes();
    throw std::runtime_error(s.str());
  }
  if (a.numel() == 0) return 0.0;
  return (a.to(at::kDouble) - b.to(at::kDouble)).abs().max().item<double>();
}

void report(const std::string& what, double diff) {
  std::cout << "DIFF " << what << " " << diff << std::endl;
}

void run_layer(const ProbeArgs& a, const ddp3d::dist::DistEnv& env) {
  const std::vector<int64_t> shape = ints(a.get("--shape", "8,4,3,5"));
  const std::vector<int64_t> split = ints(a.get("--split", ""));
  if (static_cast<int>(split.size()) != env.world_size) {
    throw std::invalid_argument("--split needs one count per rank");
  }
  int64_t begin = 0;
  for (int r = 0; r < env.rank; ++r) begin += split[static_cast<size_t>(r)];
  const int64_t mine = split[static_cast<size_t>(env.rank)];
  const int64_t c = shape[1];

  // The same global batch, output gradient and affine parameters on every rank.
  auto gen = at::make_generator<at::CPUGeneratorImpl>(42);
  std::vector<int64_t> bshape(shape.size(), 1);
  bshape[1] = c;
  const at::Tensor x = at::randn(shape, gen) * (at::arange(c, at::kFloat) + 1).view(bshape) +
                       at::arange(c, at::kFloat).view(bshape);
  const at::Tensor dy = at::randn(shape, gen);
  const at::Tensor weight = at::rand({c}, gen) + 0.5;
  const at::Tensor bias = at::randn({c}, gen);
  const auto options = torch::nn::BatchNormOptions(c).eps(1e-3).momentum(0.1);

  // Reference: plain BatchNorm on the whole batch in one process.
  torch::nn::BatchNorm1d ref(options);  // the functional form below takes any rank
  {
    at::NoGradGuard ng;
    ref->weight.copy_(weight);
    ref->bias.copy_(bias);
  }
  auto ref_forward = [&](const at::Tensor& t) {
    return torch::nn::functional::detail::batch_norm(t, ref->running_mean, ref->running_var,
                                                     ref->weight, ref->bias, true, 0.1, 1e-3);
  };
  ref_forward(x * 0.5 + 1.0);
  const at::Tensor ref_in = x.clone().requires_grad_(true);
  const at::Tensor ref_out = ref_forward(ref_in);
  (ref_out * dy).sum().backward();

  auto pg = connect(env);
  ddp3d::dist::SyncBatchNorm sync(options, pg.get());
  {
    at::NoGradGuard ng;
    sync->weight.copy_(weight);
    sync->bias.copy_(bias);
  }
  const at::Tensor x_mine = x.narrow(0, begin, mine);
  const at::Tensor dy_mine = dy.narrow(0, begin, mine);
  sync->forward(x_mine * 0.5 + 1.0);
  const at::Tensor in = x_mine.clone().requires_grad_(true);
  const at::Tensor out = sync->forward(in);
  (out * dy_mine).sum().backward();

  report("out", max_diff(out, ref_out.narrow(0, begin, mine)));
  report("grad_input", max_diff(in.grad(), ref_in.grad().narrow(0, begin, mine)));
  at::Tensor gw = sync->weight.grad().clone();
  at::Tensor gb = sync->bias.grad().clone();
  all_reduce_sum(*pg, gw);
  all_reduce_sum(*pg, gb);
  report("grad_weight", max_diff(gw, ref->weight.grad()));
  report("grad_bias", max_diff(gb, ref->bias.grad()));
  report("running_mean", max_diff(sync->running_mean, ref->running_mean));
  report("running_var", max_diff(sync->running_var, ref->running_var));
  if (sync->num_batches_tracked.item<int64_t>() != 2) {
    throw std::runtime_error("num_batches_tracked is not 2");
  }

  // What a SyncBatchNorm that all-reduced only the forward statistics would give: the same
  // function with an all-reduce that skips the backward's [2C] sums.
  auto forward_only = [&pg, c](at::Tensor& t) {
    if (t.numel() == 2 * c + 1) all_reduce_sum(*pg, t);
  };
  const at::Tensor in2 = x_mine.clone().requires_grad_(true);
  const at::Tensor w2 = weight.clone().requires_grad_(true);
  const at::Tensor b2 = bias.clone().requires_grad_(true);
  const at::Tensor out2 =
      ddp3d::dist::sync_batch_norm(in2, w2, b2, {}, {}, 0.1, 1e-3, forward_only);
  (out2 * dy_mine).sum().backward();
  report("forward_only_grad_input", max_diff(in2.grad(), ref_in.grad().narrow(0, begin, mine)));
}

// Conv → BN → ReLU → Conv(stride 2) → BN → ReLU → global average → Linear.
struct NetImpl : torch::nn::Module {
  explicit NetImpl(bool plain_bn) {
    auto norm = [plain_bn](int64_t c) {
      const auto o = torch::nn::BatchNormOptions(c).eps(1e-3).momentum(0.1);
      return plain_bn ? torch::nn::AnyModule(torch::nn::BatchNorm2d(o))
                      : torch::nn::AnyModule(ddp3d::dist::SyncBatchNorm(o));
    };
    body->push_back(torch::nn::Conv2d(torch::nn::Conv2dOptions(3, 8, 3).padding(1).bias(false)));
    body->push_back(norm(8));
    body->push_back(torch::nn::ReLU());
    body->push_back(
        torch::nn::Conv2d(torch::nn::Conv2dOptions(8, 8, 3).stride(2).padding(1).bias(false)));
    body->push_back(norm(8));
    body->push_back(torch::nn::ReLU());
    register_module("body", body);
    head = register_module("head", torch::nn::Linear(8, 4));
  }
  at::Tensor forward(const at::Tensor& x) { return head(body->forward(x).mean({2, 3})); }
  torch::nn::Sequential body;
  torch::nn::Linear head{nullptr};
};
TORCH_MODULE(Net);

void run_train(const ProbeArgs& a, const ddp3d::dist::DistEnv& env) {
  const int steps = std::stoi(a.get("--steps", "4"));
  const int64_t batch = std::stoi(a.get("--batch", "4"));
  const int64_t global = batch * env.world_size;
  auto gen = at::make_generator<at::CPUGeneratorImpl>(7);
  const at::Tensor x = at::randn({global * steps, 3, 8, 8}, gen) * 2 + 0.5;
  const at::Tensor y = at::randn({global * steps, 4}, gen);

  torch::manual_seed(11);
  Net net(a.has("--plain-bn"));
  std::unique_ptr<ProcessGroup> pg;
  std::unique_ptr<ddp3d::dist::DefaultProcessGroupGuard> default_group;
  std::unique_ptr<ddp3d::dist::DistributedDataParallel> ddp;
  if (env.world_size > 1) {
    pg = connect(env);
    default_group = std::make_unique<ddp3d::dist::DefaultProcessGroupGuard>(pg.get());
    ddp3d::dist::DdpOptions o;
    o.bucket_cap_mb = 1e-3;  // several buckets in flight alongside SyncBN's all-reduces
    o.first_bucket_cap_mb = 1e-3;
    ddp = std::make_unique<ddp3d::dist::DistributedDataParallel>(net.ptr(), *pg, o);
  }
  net->train();
  torch::optim::SGD opt(net->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
  for (int step = 0; step < steps; ++step) {
    opt.zero_grad();
    const int64_t begin = step * global + env.rank * batch;
    if (ddp) ddp->prepare_forward();
    const at::Tensor loss =
        torch::mse_loss(net->forward(x.narrow(0, begin, batch)), y.narrow(0, begin, batch));
    if (ddp) ddp->prepare_backward({loss});
    loss.backward();
    if (ddp) ddp->finalize_backward();
    opt.step();
  }
  std::vector<at::Tensor> state = net->parameters();
  for (const auto& b : net->buffers()) state.push_back(b);
  write_floats(a.out + ".rank" + std::to_string(env.rank) + ".final.bin", state);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const ProbeArgs a = parse_probe_args(argc, argv, "sync_bn_probe");
    const auto env = ddp3d::dist::dist_env_from_environment();
    at::set_num_threads(1);
    if (a.scenario == "layer") {
      run_layer(a, env);
    } else if (a.scenario == "train") {
      run_train(a, env);
    } else {
      throw std::invalid_argument("unknown scenario " + a.scenario);
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "SYNC_BN_ERROR: " << e.what() << std::endl;
    return 3;
  }
}
