// One rank of a multi-process DDP test (started by ddp_dist_test through rank_spawner with
// RANK / WORLD_SIZE / MASTER_ADDR / MASTER_PORT). Runs one scenario and writes what the test
// checks into files named <out>.rank<r>.*; exits 3 with "DDP_ERROR: <message>" on stderr
// when the scenario raises.
//
//   ddp_probe allreduce OUT
//   ddp_probe train OUT --steps K --batch B [--accum A] [--no-ddp] [--bucket-bytes N]
//   [--copy-grads]
//                  [--keep-grads]
//   ddp_probe unused OUT [--find-unused] [--divergent]
//   ddp_probe overlap OUT
//   ddp_probe mismatch OUT [--count]
//   ddp_probe peer_exits OUT        (the last rank exits before the first all-reduce)
// Every scenario takes --transport gloo to keep gradients off the shared-memory all-reduce.
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/nn.h>
#include <torch/optim.h>
#include <torch/serialize.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <torch/csrc/distributed/c10d/Backend.hpp>

#include "probe_io.h"
#include "worker/dist/ddp.h"
#include "worker/dist/dist_env.h"
#include "worker/dist/distributed_sampler.h"
#include "worker/dist/process_group.h"
#include "worker/dist/shm_allreduce.h"

namespace {

using ddp3d::dist::DdpOptions;
using ddp3d::dist::DistributedDataParallel;
using ddp3d::dist::ProcessGroup;
using ddp3d::test::parse_probe_args;
using ddp3d::test::ProbeArgs;
using ddp3d::test::write_floats;
using ddp3d::test::write_text;

// An MLP without batch norm, with a buffer added to its output (to test broadcast_buffers)
// and an optional branch that the caller may leave unused.
struct MlpImpl : torch::nn::Module {
  MlpImpl(int hidden2, bool last_bias, bool with_branch)
      : fc1(register_module("fc1", torch::nn::Linear(8, 32))),
        fc2(register_module("fc2", torch::nn::Linear(32, hidden2))),
        fc3(register_module(
            "fc3", torch::nn::Linear(torch::nn::LinearOptions(hidden2, 4).bias(last_bias)))) {
    offset = register_buffer("offset", torch::zeros({4}));
    if (with_branch) branch = register_module("branch", torch::nn::Linear(8, 4));
  }
  torch::Tensor forward(const torch::Tensor& x, bool use_branch = false) {
    auto y = fc3(torch::tanh(fc2(torch::tanh(fc1(x))))) + offset;
    if (use_branch) y = y + branch(x);
    return y;
  }
  torch::nn::Linear fc1, fc2, fc3;
  torch::nn::Linear branch{nullptr};
  torch::Tensor offset;
};
TORCH_MODULE(Mlp);

std::string prefix(const ProbeArgs& a, int rank) {
  return a.out + ".rank" + std::to_string(rank);
}

std::unique_ptr<ProcessGroup> connect(const ddp3d::dist::DistEnv& env, const ProbeArgs& a) {
  ddp3d::dist::ProcessGroupOptions opts;
  opts.timeout = std::chrono::seconds(30);
  const auto transport = a.get("--transport", std::string("shm"));
  if (transport != "shm" && transport != "gloo") {
    throw std::invalid_argument("--transport takes shm or gloo, not " + transport);
  }
  opts.shared_memory_allreduce = transport == "shm";
  auto pg = ddp3d::dist::init_process_group(env, opts);
  auto* shm = pg->shared_memory_allreduce();
  write_text(prefix(a, env.rank) + ".transport.txt",
             !shm                ? "gloo"
             : shm->nodes() == 1 ? "shm"
                                 : "shm nodes=" + std::to_string(shm->nodes()));
  return pg;
}

// The last rank exits abruptly once connected; the others must fail promptly in their
// first shared-memory all-reduce, naming it, instead of waiting for the timeout.
void run_peer_exits(const ProbeArgs& a, const ddp3d::dist::DistEnv& env) {
  auto pg = connect(env, a);
  if (!pg->shared_memory_allreduce()) throw std::runtime_error("no shared-memory all-reduce");
  if (env.rank == env.world_size - 1) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    std::_Exit(7);
  }
  auto t = at::ones({4096});
  pg->shared_memory_allreduce()->allreduce(t, 0)->wait();
}

void run_allreduce(const ProbeArgs& a, const ddp3d::dist::DistEnv& env) {
  auto pg = connect(env, a);
  auto t = at::arange(1000, at::kDouble) * (env.rank + 1) + 0.25;
  std::vector<at::Tensor> v{t};
  pg->backend().allreduce(v)->wait();
  write_floats(prefix(a, env.rank) + ".bin", {t});
}

// K optimizer steps of SGD on a fixed synthetic data set, in DistributedSampler order.
void run_train(const ProbeArgs& a, const ddp3d::dist::DistEnv& env) {
  const int steps = a.get("--steps", 6);
  const int batch = a.get("--batch", 4);
  const int accum = a.get("--accum", 1);
  const bool use_ddp = !a.has("--no-ddp");
  const int n = 144;
  auto gen = at::make_generator<at::CPUGeneratorImpl>(1234);
  const auto x = at::randn({n, 8}, gen);
  const auto y = at::randn({n, 4}, gen);

  torch::manual_seed(100 + static_cast<std::uint64_t>(env.rank));  // ranks start different
  Mlp model(32, true, false);
  std::unique_ptr<ProcessGroup> pg;
  std::unique_ptr<DistributedDataParallel> ddp;
  if (use_ddp) {
    pg = connect(env, a);
    DdpOptions o;
    // Tiny caps (default: one parameter per bucket) so several all-reduces are in flight.
    constexpr double kMiB = 1024.0 * 1024.0;
    o.bucket_cap_mb = a.get("--bucket-bytes", 64) / kMiB;
    o.first_bucket_cap_mb = a.get("--bucket-bytes", 64) / kMiB;
    o.gradient_as_bucket_view = !a.has("--copy-grads");
    ddp = std::make_unique<DistributedDataParallel>(model.ptr(), *pg, o);
  }
  write_floats(prefix(a, env.rank) + ".init.bin", model->parameters());
  torch::optim::SGD opt(model->parameters(), torch::optim::SGDOptions(0.05).momentum(0.9));
  ddp3d::dist::DistributedSampler sampler(
      n, {.num_replicas = env.world_size, .rank = env.rank, .shuffle = true, .seed = 7});
  const auto order = sampler.indices();
  int micro = 0;
  for (int step = 0; step < steps; ++step) {
    opt.zero_grad(/*set_to_none=*/!a.has("--keep-grads"));
    for (int m = 0; m < accum; ++m, ++micro) {
      // Every rank sets a different buffer value; broadcast_buffers makes rank 0's win.
      {
        torch::NoGradGuard ng;
        model->offset.fill_(0.01 * step + 0.5 * env.rank);
      }
      std::vector<std::int64_t> idx(order.begin() + micro * batch,
                                    order.begin() + (micro + 1) * batch);
      const auto ids = at::tensor(idx, at::kLong);
      auto run_micro = [&] {
        if (ddp) ddp->prepare_forward();
        auto loss =
            torch::mse_loss(model->forward(x.index_select(0, ids)), y.index_select(0, ids)) / accum;
        if (ddp) ddp->prepare_backward({loss});
        loss.backward();
        if (ddp) ddp->finalize_backward();
      };
      if (ddp && m + 1 < accum) {
        auto guard = ddp->no_sync();
        run_micro();
      } else {
        run_micro();
      }
    }
    if (ddp) {
      const auto& st = ddp->last_step_stats();
      if (st.step != step || st.buckets != static_cast<int>(ddp->bucket_assignment().size()) ||
          st.bytes_reduced <= 0) {
        throw std::runtime_error("unexpected DDP stats at step " + std::to_string(step));
      }
    }
    opt.step();
  }
  write_floats(prefix(a, env.rank) + ".final.bin", model->parameters());
  if (ddp) {
    write_text(prefix(a, env.rank) + ".buckets.txt",
               std::to_string(ddp->bucket_assignment().size()));
    auto* shm = pg->shared_memory_allreduce();
    write_text(prefix(a, env.rank) + ".in_place.txt",
               std::to_string(shm ? shm->in_place_allreduces() : 0));
  }
}

void run_unused(const ProbeArgs& a, const ddp3d::dist::DistEnv& env) {
  auto pg = connect(env, a);
  torch::manual_seed(5);
  Mlp model(32, true, true);
  DdpOptions o;
  o.find_unused_parameters = a.has("--find-unused");
  o.bucket_cap_mb = 1.0 / 1024.0;
  o.first_bucket_cap_mb = 1.0 / 1024.0;
  DistributedDataParallel ddp(model.ptr(), *pg, o);
  torch::optim::SGD opt(model->parameters(), torch::optim::SGDOptions(0.1));
  // --divergent: only rank 0 uses the branch (a data-dependent unused parameter).
  const bool use_branch = a.has("--divergent") && env.rank == 0;
  for (int step = 0; step < 3; ++step) {
    opt.zero_grad();
    ddp.prepare_forward();
    auto x = torch::randn({4, 8});
    auto loss = model->forward(x, use_branch).pow(2).mean();
    ddp.prepare_backward({loss});
    loss.backward();
    ddp.finalize_backward();
    opt.step();
  }
  write_floats(prefix(a, env.rank) + ".final.bin", model->parameters());
  write_text(prefix(a, env.rank) + ".branch_grad.txt",
             model->branch->weight.grad().defined() ? "defined" : "undefined");
}

// Parameters loaded into the module after DDP was built: the step must fail, not silently
// skip the all-reduce.
void run_replaced(const ProbeArgs& a, const ddp3d::dist::DistEnv& env) {
  auto pg = connect(env, a);
  torch::manual_seed(7);
  Mlp model(32, true, false);
  const std::string saved = prefix(a, env.rank) + ".model.pt";
  torch::save(model, saved);
  DistributedDataParallel ddp(model.ptr(), *pg, DdpOptions{});
  torch::load(model, saved);
  ddp.prepare_forward();
  auto loss = model->forward(torch::randn({4, 8})).pow(2).mean();
  ddp.prepare_backward({loss});
  loss.backward();
  ddp.finalize_backward();
}

void run_overlap(const ProbeArgs& a, const ddp3d::dist::DistEnv& env) {
  auto pg = connect(env, a);
  torch::manual_seed(3);
  torch::nn::Sequential net;
  for (int i = 0; i < 8; ++i) {
    net->push_back(torch::nn::Linear(256, 256));
    net->push_back(torch::nn::ReLU());
  }
  DdpOptions o;
  o.bucket_cap_mb = 0.25;  // one 256x256 fp32 weight per bucket
  o.first_bucket_cap_mb = 0.25;
  DistributedDataParallel ddp(net.ptr(), *pg, o);
  int observed = 0;
  ddp.set_bucket_launch_observer([&](const ddp3d::dist::BucketEvent&) { ++observed; });
  std::ostringstream report;
  for (int step = 0; step < 3; ++step) {
    ddp.prepare_forward();
    auto loss = net->forward(torch::randn({512, 256})).pow(2).mean();
    ddp.prepare_backward({loss});
    loss.backward();
    const auto& st = ddp.finalize_backward();
    int in_backward = 0;
    for (const auto& e : st.timeline) in_backward += e.launched_in_backward ? 1 : 0;
    const auto lead = std::chrono::duration_cast<std::chrono::microseconds>(
                          st.backward_end - st.timeline.front().launched)
                          .count();
    report << "step=" << step << " buckets=" << st.buckets << " in_backward=" << in_backward
           << " first_bucket=" << st.timeline.front().bucket << " first_launch_lead_us=" << lead
           << " backward_us="
           << std::chrono::duration_cast<std::chrono::microseconds>(st.backward_end -
                                                                    st.backward_start)
                  .count()
           << " wait_us=" << static_cast<long>(st.allreduce_wait_s * 1e6);
    // With the shared-memory transport the first bucket's completion time is known: how long
    // before the end of backward its all-reduce had finished.
    const auto done = st.timeline.front().completed;
    report << " first_done_lead_us="
           << (done == std::chrono::steady_clock::time_point{}
                   ? std::string("na")
                   : std::to_string(std::chrono::duration_cast<std::chrono::microseconds>(
                                        st.backward_end - done)
                                        .count()))
           << "\n";
  }
  report << "observed=" << observed << "\n";
  write_text(prefix(a, env.rank) + ".overlap.txt", report.str());
}

void run_mismatch(const ProbeArgs& a, const ddp3d::dist::DistEnv& env) {
  auto pg = connect(env, a);
  const bool odd = env.rank == env.world_size - 1;
  // The last rank builds a different model: fc2 narrower, or (--count) fc3 without bias.
  Mlp model(odd && !a.has("--count") ? 31 : 32, !(odd && a.has("--count")), false);
  DistributedDataParallel ddp(model.ptr(), *pg, {});
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const ProbeArgs a = parse_probe_args(argc, argv, "ddp_probe");
    auto env = ddp3d::dist::dist_env_from_environment();
    at::set_num_threads(1);
    if (a.scenario == "allreduce") {
      run_allreduce(a, env);
    } else if (a.scenario == "train") {
      run_train(a, env);
    } else if (a.scenario == "unused") {
      run_unused(a, env);
    } else if (a.scenario == "overlap") {
      run_overlap(a, env);
    } else if (a.scenario == "replaced") {
      run_replaced(a, env);
    } else if (a.scenario == "mismatch") {
      run_mismatch(a, env);
    } else if (a.scenario == "peer_exits") {
      run_peer_exits(a, env);
    } else {
      throw std::invalid_argument("unknown scenario " + a.scenario);
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "DDP_ERROR: " << e.what() << std::endl;
    return 3;
  }
}
