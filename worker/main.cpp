// ddp3d: the worker binary. Each subcommand lives in its own library; this file only
// dispatches.
#include <malloc.h>

#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "worker/cli/check_dist_command.h"
#include "worker/cli/data_command.h"
#include "worker/cli/train_test_commands.h"
#include "worker/components/builtin_components.h"
#include "worker/launch/launcher.h"

namespace {

constexpr const char* kUsage =
    "usage: ddp3d <command> [args...]\n"
    "  train       train a model from a config (ddp3d train CONFIG ...)\n"
    "  test        evaluate a checkpoint (ddp3d test CONFIG CHECKPOINT ...)\n"
    "  launch      start one process per local rank (torch.distributed.launch)\n"
    "  check-dist  join the process group and verify an all-reduce\n"
    "  data        dataset tools: synth-kitti (synthetic KITTI-layout data), create-gt-db,\n"
    "              browse (pictures of the training data)\n";

// Training allocates and frees the same large activations every iteration. glibc serves blocks
// above its mmap threshold (at most 32 MiB) with fresh mmaps and trims freed heap back to the
// kernel, so each iteration page-faults its activations in again (about 12% of a CPU step of
// the demo PointPillars, measured with perf). Keeping them in the heap avoids that. The
// MALLOC_MMAP_THRESHOLD_ / MALLOC_TRIM_THRESHOLD_ variables still win when set.
void keep_large_allocations_in_the_heap() {
  if (std::getenv("MALLOC_MMAP_THRESHOLD_") == nullptr) mallopt(M_MMAP_THRESHOLD, 256 << 20);
  if (std::getenv("MALLOC_TRIM_THRESHOLD_") == nullptr) mallopt(M_TRIM_THRESHOLD, 512 << 20);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string_view command = argc >= 2 ? argv[1] : "";
  if (command == "train" || command == "test" || command == "data") {
    keep_large_allocations_in_the_heap();
    ddp3d::components::register_builtin_components();
  }
  if (command == "train") return ddp3d::cli::run_train(argc - 1, argv + 1);
  if (command == "test") return ddp3d::cli::run_test(argc - 1, argv + 1);
  if (command == "launch") return ddp3d::launch::run_launch(argc - 1, argv + 1);
  if (command == "check-dist") return ddp3d::cli::run_check_dist(argc - 1, argv + 1);
  if (command == "data") return ddp3d::cli::run_data(argc - 1, argv + 1);
  std::fputs(kUsage, stderr);
  return command == "--help" || command == "-h" ? 0 : 2;
}
