// Training-step throughput of ddp3d's DistributedDataParallel, one rank per process (started
// by benchmarks/ddp/run with RANK / WORLD_SIZE / MASTER_ADDR / MASTER_PORT). The network,
// data, optimizer and timing match torch_ddp_bench.py line for line.
//
//   ddp_bench [--iters N] [--warmup N] [--batch B] [--no-ddp]
//
// Rank 0 prints `ITERS_PER_S <x>` and DDP's per-step figures.
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/nn.h>
#include <torch/optim.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>

#include "worker/dist/ddp.h"
#include "worker/dist/dist_env.h"
#include "worker/dist/process_group.h"

namespace {

// 512 -> 1024 -> 1024 -> 1024 -> 512 -> 10 (3.2 M parameters, 12.7 MB of fp32 gradients).
torch::nn::Sequential make_net() {
  torch::nn::Sequential net;
  const int widths[] = {512, 1024, 1024, 1024, 512};
  for (int i = 0; i + 1 < 5; ++i) {
    net->push_back(torch::nn::Linear(widths[i], widths[i + 1]));
    net->push_back(torch::nn::ReLU());
  }
  net->push_back(torch::nn::Linear(512, 10));
  return net;
}

}  // namespace

int main(int argc, char** argv) {
  int iters = 60, warmup = 10, batch = 64;
  bool use_ddp = true;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--iters" && i + 1 < argc)
      iters = std::stoi(argv[++i]);
    else if (a == "--warmup" && i + 1 < argc)
      warmup = std::stoi(argv[++i]);
    else if (a == "--batch" && i + 1 < argc)
      batch = std::stoi(argv[++i]);
    else if (a == "--no-ddp")
      use_ddp = false;
    else {
      std::cerr << "ddp_bench: unknown argument " << a << "\n";
      return 2;
    }
  }
  at::set_num_threads(1);
  const auto env = ddp3d::dist::dist_env_from_environment();
  torch::manual_seed(0);
  auto net = make_net();
  std::unique_ptr<ddp3d::dist::ProcessGroup> pg;
  std::unique_ptr<ddp3d::dist::DistributedDataParallel> ddp;
  if (use_ddp) {
    pg = ddp3d::dist::init_process_group(env, {});
    ddp = std::make_unique<ddp3d::dist::DistributedDataParallel>(net.ptr(), *pg);
  }
  torch::optim::SGD opt(net->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
  // Synthetic data: 8 fixed batches per rank, cycled.
  auto gen = at::make_generator<at::CPUGeneratorImpl>(1000 + env.rank);
  std::vector<at::Tensor> xs, ys;
  for (int k = 0; k < 8; ++k) {
    xs.push_back(at::randn({batch, 512}, gen));
    ys.push_back(at::randint(10, {batch}, gen, at::kLong));
  }
  double wait_s = 0;
  std::int64_t bytes = 0;
  std::chrono::steady_clock::time_point start;
  for (int it = 0; it < warmup + iters; ++it) {
    if (it == warmup) {
      if (pg) pg->barrier();
      start = std::chrono::steady_clock::now();
    }
    opt.zero_grad();
    if (ddp) ddp->prepare_forward();
    auto loss = torch::nn::functional::cross_entropy(net->forward(xs[it % 8]), ys[it % 8]);
    if (ddp) ddp->prepare_backward({loss});
    loss.backward();
    if (ddp) {
      const auto& st = ddp->finalize_backward();
      if (it >= warmup) {
        wait_s += st.allreduce_wait_s;
        bytes += st.bytes_reduced;
      }
    }
    opt.step();
  }
  if (pg) pg->barrier();
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (env.rank == 0) {
    std::printf(
        "ddp3d world=%d batch=%d iters=%d: %.3f s, allreduce wait %.2f ms/step, %.1f MB/step\n",
        env.world_size, batch, iters, secs, 1e3 * wait_s / iters, bytes / 1e6 / iters);
    std::printf("ITERS_PER_S %.4f\n", iters / secs);
  }
  return 0;
}
