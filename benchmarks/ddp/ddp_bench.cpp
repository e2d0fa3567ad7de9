// Training-step throughput of ddp3d's DistributedDataParallel, one rank per process (started
// by benchmarks/ddp/run with RANK / WORLD_SIZE / MASTER_ADDR / MASTER_PORT). The network,
// data, optimizer and timing match torch_ddp_bench.py line for line.
//
//   ddp_bench [--iters N] [--warmup N] [--batch B] [--no-ddp] [--bucket-cap-mb M]
//             [--transport shm|gloo]
//
// --transport gloo keeps gradients on Gloo's TCP all-reduce; the default (shm) uses the
// shared-memory all-reduce ddp3d sets up for ranks on one node.
//
// Rank 0 prints `ITERS_PER_S <x>` and DDP's per-step figures.
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/nn.h>
#include <torch/optim.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <string>

#include "worker/dist/ddp.h"
#include "worker/dist/dist_env.h"
#include "worker/dist/process_group.h"

namespace {

// CPU time of the whole process (all threads: compute, Gloo, autograd), in seconds. Under
// a loaded machine this is steadier than wall time, which depends on the CPU share we get.
double process_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

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
  ddp3d::dist::DdpOptions ddp_options;  // defaults, as PyTorch's side uses its defaults
  ddp3d::dist::ProcessGroupOptions pg_options;
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
    else if (a == "--bucket-cap-mb" && i + 1 < argc)
      ddp_options.bucket_cap_mb = std::stod(argv[++i]);
    else if (a == "--transport" && i + 1 < argc) {
      const std::string t = argv[++i];
      if (t != "shm" && t != "gloo") {
        std::cerr << "ddp_bench: --transport takes shm or gloo, not " << t << "\n";
        return 2;
      }
      pg_options.shared_memory_allreduce = t == "shm";
    } else {
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
    pg = ddp3d::dist::init_process_group(env, pg_options);
    if (pg_options.shared_memory_allreduce && !pg->shared_memory_allreduce()) {
      std::cerr << "ddp_bench: no shared-memory all-reduce (see the warning above)\n";
      return 1;
    }
    ddp = std::make_unique<ddp3d::dist::DistributedDataParallel>(net.ptr(), *pg, ddp_options);
  }
  torch::optim::SGD opt(net->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
  // Synthetic data: 8 fixed batches per rank, cycled.
  auto gen = at::make_generator<at::CPUGeneratorImpl>(1000 + env.rank);
  std::vector<at::Tensor> xs, ys;
  for (int k = 0; k < 8; ++k) {
    xs.push_back(at::randn({batch, 512}, gen));
    ys.push_back(at::randint(10, {batch}, gen, at::kLong));
  }
  // Where a step's time goes (timed iterations only): forward, backward (including DDP's
  // finalize, which the autograd engine runs at its end), of which all-reduce wait, and
  // the optimizer.
  double fwd_s = 0, bwd_s = 0, wait_s = 0, finalize_s = 0, opt_s = 0;
  std::int64_t bytes = 0;
  using Clock = std::chrono::steady_clock;
  auto since = [](Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
  };
  Clock::time_point start;
  double cpu_start = 0;
  for (int it = 0; it < warmup + iters; ++it) {
    if (it == warmup) {
      if (pg) pg->barrier();
      start = Clock::now();
      cpu_start = process_cpu_s();
      fwd_s = bwd_s = wait_s = finalize_s = opt_s = 0;
      bytes = 0;
    }
    auto t0 = Clock::now();
    opt.zero_grad();
    if (ddp) ddp->prepare_forward();
    auto loss = torch::nn::functional::cross_entropy(net->forward(xs[it % 8]), ys[it % 8]);
    if (ddp) ddp->prepare_backward({loss});
    fwd_s += since(t0);
    t0 = Clock::now();
    loss.backward();
    if (ddp) {
      const auto& st = ddp->finalize_backward();
      wait_s += st.allreduce_wait_s;
      finalize_s += st.finalize_s;
      bytes += st.bytes_reduced;
    }
    bwd_s += since(t0);
    t0 = Clock::now();
    opt.step();
    opt_s += since(t0);
  }
  if (pg) pg->barrier();
  const double secs = since(start);
  const double cpu_s = process_cpu_s() - cpu_start;
  if (env.rank == 0) {
    const double ms = 1e3 / iters;
    std::printf(
        "ddp3d world=%d batch=%d iters=%d: %.3f s; per step: forward %.1f ms, backward %.1f ms "
        "(finalize %.1f ms, of which allreduce wait %.1f ms), optimizer %.1f ms; %.1f MB "
        "all-reduced\n",
        env.world_size, batch, iters, secs, fwd_s * ms, bwd_s * ms, finalize_s * ms, wait_s * ms,
        opt_s * ms, static_cast<double>(bytes) / 1e6 / iters);
    std::printf("ITERS_PER_S %.4f\n", iters / secs);
    std::printf("CPU_MS_PER_ITER %.3f\n", 1e3 * cpu_s / iters);
  }
  return 0;
}
