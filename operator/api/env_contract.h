// The environment variables the operator sets on every pod (design.md, "Environment
// contract"). They are reserved: a user value would silently break rendezvous, so validation
// rejects TrainingJobs that set one.
#pragma once

#include <array>
#include <string_view>

namespace ddp3d::op::api {

inline constexpr std::array<std::string_view, 14> kReservedEnv = {
    "NNODES",          "NODE_RANK",       "MASTER_ADDR", "PORT",          "GPUS",
    "MASTER_PORT",     "WORLD_SIZE",      "PET_NNODES",  "PET_NODE_RANK", "PET_NPROC_PER_NODE",
    "PET_MASTER_ADDR", "PET_MASTER_PORT", "DDP3D_JOB",   "DDP3D_ATTEMPT",
};

inline bool is_reserved_env(std::string_view name) {
  for (auto r : kReservedEnv) {
    if (r == name) return true;
  }
  return false;
}

}  // namespace ddp3d::op::api
