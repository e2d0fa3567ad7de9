// ddp3d: the worker binary. Each subcommand lives in its own library; this file only
// dispatches.
#include <cstdio>
#include <string_view>

#include "worker/cli/check_dist_command.h"
#include "worker/launch/launcher.h"

namespace {

constexpr const char* kUsage =
    "usage: ddp3d <command> [args...]\n"
    "  launch      start one process per local rank (torch.distributed.launch)\n"
    "  check-dist  join the process group and verify an all-reduce\n";

}  // namespace

int main(int argc, char** argv) {
  const std::string_view command = argc >= 2 ? argv[1] : "";
  if (command == "launch") return ddp3d::launch::run_launch(argc - 1, argv + 1);
  if (command == "check-dist") return ddp3d::cli::run_check_dist(argc - 1, argv + 1);
  std::fputs(kUsage, stderr);
  return command == "--help" || command == "-h" ? 0 : 2;
}
