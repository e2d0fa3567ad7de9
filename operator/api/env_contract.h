// The environment variables the operator sets on every pod (design.md, "Environment
// contract"). They are reserved: a user value would silently break rendezvous, so validation
// rejects TrainingJobs that set one.
#pragma once

#include <array>
#include <string_view>

namespace ddp3d::op::api {

// Set by the operator on every pod.
inline constexpr std::array<std::string_view, 16> kReservedEnv = {
    "NNODES",        "NODE_RANK",          "MASTER_ADDR",        "PORT",
    "GPUS",          "MASTER_PORT",        "WORLD_SIZE",         "PET_NNODES",
    "PET_NODE_RANK", "PET_NPROC_PER_NODE", "PET_MASTER_ADDR",    "PET_MASTER_PORT",
    "DDP3D_JOB",     "DDP3D_ATTEMPT",      "DDP3D_METRICS_PORT", "DDP3D_BATCH_WORLD_SIZE",
};
// DDP3D_BATCH_WORLD_SIZE: the world size at spec.nnodes, which the global batch is defined at;
// a job running on fewer nodes (spec.elastic) keeps that global batch (docs/training.md).
// DDP3D_METRICS_PORT (spec.metricsPort, default 9400): each local rank of a pod serves
// Prometheus /metrics on this port + LOCAL_RANK (docs/metrics.md, "Worker metrics"); the pod
// declares them as container ports "metrics" (local rank 0), "metrics-1", ... for the
// chart's PodMonitor.
// Set by the launcher for each local process; a pod-level value would be overwritten or,
// worse, leak into a process that reads it before the launcher runs.
inline constexpr std::array<std::string_view, 4> kLauncherEnv = {"RANK", "LOCAL_RANK",
                                                                 "LOCAL_WORLD_SIZE", "GROUP_RANK"};
// Whole namespaces kept for the contract's future variables (matches the CRD's CEL rule).
inline constexpr std::array<std::string_view, 2> kReservedPrefixes = {"PET_", "DDP3D_"};

inline bool is_reserved_env(std::string_view name) {
  for (auto r : kReservedEnv) {
    if (r == name) return true;
  }
  for (auto r : kLauncherEnv) {
    if (r == name) return true;
  }
  for (auto p : kReservedPrefixes) {
    if (name.substr(0, p.size()) == p) return true;
  }
  return false;
}

}  // namespace ddp3d::op::api
