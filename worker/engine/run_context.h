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
  // The world size the global batch is defined at (DDP3D_BATCH_WORLD_SIZE): global batch =
  // batch_world_size × train_dataloader.batch_size; at a smaller world size each rank trains
  // its larger share in micro-batches. 0: world_size. Never below world_size.
  int batch_world_size = 0;
};

}  // namespace ddp3d::engine
