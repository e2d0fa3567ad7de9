#include "worker/launch/launcher.h"

#include <cstdlib>
#include <iostream>
#include <stdexcept>

#include "common/exit_codes.h"
#include "common/log.h"
#include "worker/launch/launch_options.h"
#include "worker/launch/process_supervisor.h"

extern char** environ;

namespace ddp3d::launch {
namespace {

std::map<std::string, std::string> current_environment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string entry(*e);
    const auto eq = entry.find('=');
    if (eq != std::string::npos) env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  return env;
}

}  // namespace

int run_launch(int argc, char** argv) {
  const auto environment = current_environment();
  LaunchOptions options;
  try {
    options = parse_launch_options(std::vector<std::string>(argv + 1, argv + argc), environment);
  } catch (const std::invalid_argument& e) {
    std::cerr << "ddp3d launch: " << e.what() << "\n";
    return 2;
  }
  log::set_prefix("[launch node " + std::to_string(options.node_rank) + "]");
  log::info("starting " + std::to_string(options.nproc_per_node) + " process(es) on node " +
            std::to_string(options.node_rank) + "/" + std::to_string(options.nnodes) +
            ": world size " + std::to_string(options.world_size()) + ", master " +
            options.master_addr + ":" + std::to_string(options.master_port));

  std::vector<ChildSpec> children;
  for (int local = 0; local < options.nproc_per_node; ++local) {
    ChildSpec spec;
    auto env = rank_environment(options, local);
    spec.name = "rank " + env["RANK"] + " (local rank " + std::to_string(local) + ")";
    // As torchrun: one intra-op thread per rank unless the user chose, or ranks sharing a
    // node oversubscribe its cores.
    if (options.nproc_per_node > 1 && !environment.contains("OMP_NUM_THREADS")) {
      env["OMP_NUM_THREADS"] = "1";
    }
    spec.env = std::move(env);
    spec.argv = options.command;
    children.push_back(std::move(spec));
  }
  const SupervisorResult result = supervise(children, options.grace_period);
  if (!result.failed_name.empty() && result.exit_code == exit_code::kPeerLost) {
    // Passed on as is: the operator tells collateral ranks from the one that failed by it.
    log::error("stopped: " + result.failed_name + " lost a peer (exit code " +
               std::to_string(result.exit_code) + ")");
  } else if (!result.failed_name.empty()) {
    log::error("failed: " + result.failed_name + " (exit code " + std::to_string(result.exit_code) +
               ")");
  } else if (result.exit_code == 0) {
    log::info("all " + std::to_string(children.size()) + " process(es) finished");
  }
  return result.exit_code;
}

}  // namespace ddp3d::launch
