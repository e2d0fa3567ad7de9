// Options of `ddp3d launch` (the C++ counterpart of `python -m torch.distributed.launch`):
// flags win over the seed's environment (NNODES, NODE_RANK, MASTER_ADDR, PORT/MASTER_PORT,
// GPUS), which wins over the defaults.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace ddp3d::launch {

struct LaunchOptions {
  int nnodes = 1;
  int node_rank = 0;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  int nproc_per_node = 1;
  // GPUS as given (0 = one CPU process per node); passed on to the ranks.
  int gpus = 0;
  // After one rank fails or the launcher gets SIGTERM, how long the ranks get between SIGTERM
  // and SIGKILL: time for a checkpoint (Kubernetes' default grace is 30 s too).
  std::chrono::milliseconds grace_period{std::chrono::seconds(30)};
  std::vector<std::string> command;  // the program every rank runs, with its arguments

  int world_size() const { return nnodes * nproc_per_node; }
};

// Parses argv (after the "launch" word) with `environment` as the fallback for every flag.
// Throws std::invalid_argument naming the flag or variable on bad input.
LaunchOptions parse_launch_options(const std::vector<std::string>& args,
                                   const std::map<std::string, std::string>& environment);

// The environment variables one local rank gets on top of the launcher's own.
std::map<std::string, std::string> rank_environment(const LaunchOptions& options, int local_rank);

std::string launch_usage();

}  // namespace ddp3d::launch
