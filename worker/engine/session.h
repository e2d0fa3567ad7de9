// What `train` and `test` set up the same way once the config is loaded: the process group
// (from the launcher's environment), the device, the seed, threads, the work dir and the logs.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "worker/config/config.h"
#include "worker/engine/run_context.h"
#include "worker/engine/train_log.h"

namespace ddp3d::dist {
class ProcessGroup;
class DefaultProcessGroupGuard;
}  // namespace ddp3d::dist

namespace ddp3d::engine {

struct Session {
  std::unique_ptr<dist::ProcessGroup> pg;
  // pg as the process-wide default group (SyncBatchNorm finds it there) while it lives;
  // declared after pg, so it is reset first.
  std::unique_ptr<dist::DefaultProcessGroupGuard> default_group;
  RunContext ctx;
  std::string backend = "none";
  std::filesystem::path work_dir;
  std::unique_ptr<TrainLog> log;
  ~Session();
};

// Checks that every `type` the config names is registered, so a typo fails before any process
// group starts. Throws config::ConfigError naming key and file.
void check_component_types(const config::Config& cfg);

// `launcher`: "none" or "pytorch". Joins the process group, picks the device, agrees on the seed
// (rank 0's, from randomness.seed or random), applies randomness.deterministic, creates the work
// dir and (rank 0) the logs, dumps the merged config, and logs the first lines.
std::unique_ptr<Session> start_session(const config::Config& cfg, const std::string& launcher,
                                       const std::string& command);

}  // namespace ddp3d::engine
