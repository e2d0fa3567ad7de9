#include "worker/engine/device_plan.h"

#include <stdexcept>

#ifdef DDP3D_WITH_CUDA
#include <c10/cuda/CUDAFunctions.h>
#endif

#include "worker/dist/dist_env.h"

namespace ddp3d::engine {
namespace {

std::string backend_title(const std::string& backend) {
  return backend == "nccl" ? "NCCL" : backend == "gloo" ? "Gloo" : backend;
}

std::string rank_of(const DeviceFacts& f) {
  return "rank " + std::to_string(f.rank) + "/" + std::to_string(f.world_size);
}

}  // namespace

DevicePlan plan_device(const DeviceFacts& f) {
  DevicePlan p;
  if (!f.launched) {
    p.cpu_reason = "one process, no launcher";
    p.summary = "rank 0/1: CPU (" + p.cpu_reason + "), no process group";
    return p;
  }
  if (!f.cuda_built) {
    p.cpu_reason = "no CUDA in this build";
  } else if (f.gpus <= 0) {
    p.cpu_reason = "GPUS=0";
  } else if (f.visible_gpus <= 0) {
    p.cpu_reason = "no CUDA device visible";
  } else if (f.local_rank >= f.visible_gpus) {
    throw std::runtime_error("LOCAL_RANK " + std::to_string(f.local_rank) + " but only " +
                             std::to_string(f.visible_gpus) +
                             " CUDA devices are visible (GPUS is more than this node has?)");
  } else {
    p.cuda = true;
    p.device_index = f.local_rank;
  }
  p.backend = f.backend == "auto" ? (p.cuda ? "nccl" : "gloo") : f.backend;
  if (p.cuda) {
    p.summary = rank_of(f) + ": cuda:" + std::to_string(p.device_index) + " of " +
                std::to_string(f.visible_gpus) + " visible GPU" + (f.visible_gpus == 1 ? "" : "s") +
                ", " + backend_title(p.backend);
  } else {
    p.summary = rank_of(f) + ": CPU (" + p.cpu_reason + "), " + std::to_string(f.world_size) +
                (f.world_size == 1 ? " process" : " processes") + " over " +
                backend_title(p.backend);
  }
  return p;
}

DeviceFacts device_facts_from_environment(bool launched, const std::string& backend) {
  DeviceFacts f;
  f.launched = launched;
  f.backend = backend;
  if (launched) {
    const dist::DistEnv env = dist::dist_env_from_environment();
    f.gpus = env.gpus;
    f.rank = env.rank;
    f.world_size = env.world_size;
    f.local_rank = env.local_rank;
  }
#ifdef DDP3D_WITH_CUDA
  f.cuda_built = true;
  // Asked only when GPUS asks for GPUs: a CPU run never touches the CUDA runtime.
  if (f.launched && f.gpus > 0) f.visible_gpus = static_cast<int>(c10::cuda::device_count());
#endif
  return f;
}

}  // namespace ddp3d::engine
