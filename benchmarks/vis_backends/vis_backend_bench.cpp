// What a logged iteration costs rank 0 with each set of visualization backends: microseconds
// per TrainLog::iteration() with LocalVisBackend alone (scalars.json) and with
// TensorboardVisBackend besides, on a PointPillars-like record (lr, momentum, 4 loss terms,
// timings), the log line to the .log file included, files in a temporary directory.
// LoggerHook logs every default_hooks.logger.interval iterations (50 by default), so a
// training iteration pays this once per interval.
//
//   vis_backend_bench [--records N]
//   -> RESULT vis_backends us_per_record_local=<x> us_per_record_local_tensorboard=<y>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "common/log.h"
#include "worker/engine/train_log.h"

namespace {

long arg_or(int argc, char** argv, const char* name, long fallback) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], name) == 0) return std::strtol(argv[i + 1], nullptr, 10);
  }
  return fallback;
}

double us_per_record(const std::filesystem::path& dir, const std::vector<std::string>& backends,
                     long records) {
  ddp3d::engine::TrainLog log(true, dir / "run", "bench", backends);
  ddp3d::engine::IterRecord r;
  r.iters_per_epoch = records;
  r.lr = 1e-3;
  r.momentum = 0.9;
  r.time = 0.5;
  r.data_time = 0.01;
  r.losses = {{"loss", 1.0}, {"loss_bbox", 0.4}, {"loss_cls", 0.5}, {"loss_dir", 0.1}};
  const auto start = std::chrono::steady_clock::now();
  for (long i = 1; i <= records; ++i) {
    r.iter_in_epoch = r.global_iter = i;
    r.losses[0].second = 1.0 / static_cast<double>(i);
    log.iteration(r);
  }
  const std::chrono::duration<double, std::micro> spent = std::chrono::steady_clock::now() - start;
  return spent.count() / static_cast<double>(records);
}

}  // namespace

int main(int argc, char** argv) {
  const long records = arg_or(argc, argv, "--records", 2000);
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("ddp3d_vis_bench_" + std::to_string(getpid()));
  // The human line goes to stderr too; measure the files, not the terminal.
  if (std::freopen("/dev/null", "w", stderr) == nullptr) return 1;
  const double local = us_per_record(dir / "local", {"LocalVisBackend"}, records);
  const double both =
      us_per_record(dir / "both", {"LocalVisBackend", "TensorboardVisBackend"}, records);
  std::filesystem::remove_all(dir);
  std::printf("RESULT vis_backends us_per_record_local=%.2f us_per_record_local_tensorboard=%.2f\n",
              local, both);
  return 0;
}
