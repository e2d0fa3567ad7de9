#include "worker/cli/check_dist_command.h"

#include <ATen/ATen.h>

#include <chrono>
#include <cmath>
#include <iostream>
#include <string>
#include <torch/csrc/distributed/c10d/Backend.hpp>

#include "common/log.h"
#include "common/parse_number.h"
#include "worker/dist/dist_env.h"
#include "worker/dist/process_group.h"
#include "worker/dist/shm_allreduce.h"

namespace ddp3d::cli {

int run_check_dist(int argc, char** argv) {
  dist::ProcessGroupOptions options;
  int elements = 1 << 16;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    try {
      if (a == "--timeout" && has_value) {
        // At least a millisecond, at most a day: the cast to milliseconds cannot overflow.
        options.timeout = std::chrono::milliseconds(
            std::llround(parse_real(a, argv[++i], 0.001, 86400.0) * 1000.0));
      } else if (a == "--backend" && has_value) {
        options.backend = dist::parse_backend(argv[++i]);
      } else if (a == "--elements" && has_value) {
        elements = static_cast<int>(parse_integer(a, argv[++i], 1, 1 << 28));
      } else {
        std::cerr << "usage: ddp3d check-dist [--timeout SECONDS] [--backend gloo|nccl] "
                     "[--elements N]\n";
        return 2;
      }
    } catch (const std::exception& e) {
      std::cerr << "ddp3d check-dist: " << e.what() << "\n";
      return 2;
    }
  }
  try {
    const auto env = dist::dist_env_from_environment();
    log::set_prefix("[rank " + std::to_string(env.rank) + "]");
    auto pg = dist::init_process_group(env, options);
    // Rank r contributes (r + 1) * i at index i, so the exact sum is i * n (n + 1) / 2.
    const auto device = pg->kind() == dist::BackendKind::kNccl
                            ? at::Device(at::kCUDA, env.local_rank)
                            : at::Device(at::kCPU);
    auto index = at::arange(elements, at::TensorOptions().dtype(at::kDouble).device(device));
    std::vector<at::Tensor> tensors{index * static_cast<double>(env.rank + 1)};
    const auto start = std::chrono::steady_clock::now();
    pg->backend().allreduce(tensors)->wait();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double n = env.world_size;
    const auto expected = index * (n * (n + 1) / 2.0);
    const double max_error = (tensors[0] - expected).abs().max().item<double>();
    if (max_error != 0.0) {
      log::error("all-reduce mismatch: max |error| = " + std::to_string(max_error));
      return 1;
    }
    log::info("all-reduce of " + std::to_string(elements) + " doubles over " +
              dist::backend_name(pg->kind()) + " is exact on rank " + std::to_string(env.rank) +
              " of world size " + std::to_string(env.world_size) + " (" +
              std::to_string(seconds * 1e3) + " ms)");
    // The gradient transport of ranks that share a node: the same check through it.
    if (auto* shm = pg->shared_memory_allreduce()) {
      auto t = index * static_cast<double>(env.rank + 1);
      const auto shm_start = std::chrono::steady_clock::now();
      shm->allreduce(t, 0)->wait();
      const double shm_seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - shm_start).count();
      const double shm_error = (t - expected).abs().max().item<double>();
      if (shm_error != 0.0) {
        log::error("shared-memory all-reduce mismatch: max |error| = " + std::to_string(shm_error));
        return 1;
      }
      log::info("shared-memory all-reduce of " + std::to_string(elements) +
                " doubles is exact on rank " + std::to_string(env.rank) + " (" +
                std::to_string(shm->world()) + " local ranks" +
                (shm->nodes() > 1 ? " x " + std::to_string(shm->nodes()) + " nodes" : "") + ", " +
                std::to_string(shm_seconds * 1e3) + " ms)");
    }
    pg->barrier();
    return 0;
  } catch (const std::exception& e) {
    log::error(e.what());
    return 1;
  }
}

}  // namespace ddp3d::cli
