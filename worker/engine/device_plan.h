// Where a rank runs (CPU or its CUDA device) and over which backend, decided before any process
// group starts, and the line every rank logs first so that `GPUS=N` on a build or machine
// without CUDA plainly says it starts N CPU processes over Gloo rather than N GPUs.
#pragma once

#include <string>

namespace ddp3d::engine {

struct DeviceFacts {
  bool cuda_built = false;  // DDP3D_WITH_CUDA
  int visible_gpus = 0;     // CUDA devices this process sees (asked only when GPUS > 0)
  int gpus = 0;             // GPUS: processes per node that each own a GPU; 0 = CPU
  bool launched = false;    // --launcher pytorch (else one process, no process group)
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  std::string backend = "auto";  // env_cfg.dist_cfg.backend: auto, nccl or gloo
};

struct DevicePlan {
  bool cuda = false;
  int device_index = -1;         // cuda:<device_index> when `cuda`
  std::string backend = "none";  // "nccl", "gloo", or "none" (not launched)
  std::string cpu_reason;        // why CPU: "no CUDA in this build", "no CUDA device visible", ..
  std::string summary;  // the first log line, e.g. "rank 0/4: CPU (...), 4 processes over Gloo"
};

// Pure. CUDA when launched with GPUS > 0 on a CUDA build that sees a device; else CPU, with the
// reason. backend "auto" is nccl on CUDA, gloo on CPU; an explicit backend is kept (nccl on CPU
// is rejected by check_device_options, naming the config key). Throws std::runtime_error when
// LOCAL_RANK has no device of its own (GPUS is more than the node has).
DevicePlan plan_device(const DeviceFacts& facts);

// The facts of this process: the build, the visible devices, the launcher's environment and
// the configured backend.
DeviceFacts device_facts_from_environment(bool launched, const std::string& backend);

}  // namespace ddp3d::engine
