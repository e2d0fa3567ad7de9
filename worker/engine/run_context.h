// Where this process trains: its rank in the process group, the device, and the run's seed.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace ddp3d::dist {
class ProcessGroup;
}

namespace ddp3d::engine {

struct RunContext {
  dist::ProcessGroup* pg = nullptr;  // null: one process
  int rank = 0;
  int world_size = 1;
  at::Device device = at::Device(at::kCPU);
  std::uint64_t seed = 0;  // the run's seed (same on every rank)
};

}  // namespace ddp3d::engine
