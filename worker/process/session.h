// What `train` and `test` set up the same way once the config is loaded: the process group
// (from the launcher's environment), the device, the seed, threads, the work dir and the logs.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "worker/config/config.h"
#include "worker/engine/device_plan.h"
#include "worker/engine/run_context.h"
#include "worker/engine/train_log.h"

namespace ddp3d::dist {
class ProcessGroup;
class DefaultProcessGroupGuard;
}  // namespace ddp3d::dist

namespace ddp3d::process {

struct Session {
  std::unique_ptr<dist::ProcessGroup> pg;
  // pg as the process-wide default group (SyncBatchNorm finds it there) while it lives;
  // declared after pg, so it is reset first.
  std::unique_ptr<dist::DefaultProcessGroupGuard> default_group;
  engine::RunContext ctx;
  std::string backend = "none";
  std::filesystem::path work_dir;
  std::unique_ptr<engine::TrainLog> log;
  ~Session();
};

// Checks that every `type` the config names is registered, so a typo fails before any process
// group starts. Throws config::ConfigError naming key and file.
void check_component_types(const config::Config& cfg);

// Decides where this rank runs (plan_device over this process's facts), sets the log prefix
// ("[rank N]"), logs the plan's summary as the rank's first line, then check_device_options.
// Call it before anything else logs and before any process group starts.
engine::DevicePlan plan_session_device(const config::Config& cfg, const std::string& launcher,
                                       const std::string& command);

// Options that work only on CUDA, on a rank that runs on CPU: env_cfg.dist_cfg.backend nccl,
// and (`train`) AmpOptimWrapper with dtype float16 (its loss scaling). Throws
// config::ConfigError naming key and file.
void check_device_options(const config::Config& cfg, const engine::DevicePlan& plan,
                          const std::string& command);

// `launcher`: "none" or "pytorch"; `plan` from plan_session_device. Joins the process group, picks
// the device, agrees on the seed (rank 0's, from randomness.seed or random), applies
// randomness.deterministic, creates the work dir and (rank 0) the logs, dumps the merged config,
// and logs the first lines.
std::unique_ptr<Session> start_session(const config::Config& cfg, const std::string& launcher,
                                       const std::string& command, const engine::DevicePlan& plan);

}  // namespace ddp3d::process
