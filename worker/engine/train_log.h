// Training logs in mmengine's formats: the human line
//   Epoch(train)  [3][ 50/500]  lr: 1.0000e-03  eta: 0:01:02  time: 0.1234  data_time: 0.0012 loss:
//   0.5678
// on stderr and in <work_dir>/<timestamp>/<timestamp>.log, and the logged scalars to the
// visualization backends (vis_backend.h; by default one JSON object per logged iteration in
// <work_dir>/<timestamp>/vis_data/scalars.json). Only rank 0 writes (the others
// construct it disabled). Formatting is pure (format_* functions); TrainLog does the I/O.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "worker/engine/vis_backend.h"

namespace ddp3d::engine {

struct IterRecord {
  std::int64_t epoch = 1;          // 1-based
  std::int64_t iter_in_epoch = 1;  // 1-based
  std::int64_t iters_per_epoch = 1;
  std::int64_t global_iter = 1;  // 1-based, across epochs
  double lr = 0;
  double momentum = 0;
  double eta_seconds = 0;
  double time = 0;       // seconds per iteration (window mean)
  double data_time = 0;  // seconds waiting for data per iteration (window mean)
  // Loss terms (window mean, averaged across ranks), in name order.
  std::vector<std::pair<std::string, double>> losses;
};

// "0:01:02" (h:mm:ss), days as "1 day, 2:03:04" like Python's timedelta.
std::string format_eta(double seconds);
std::string format_iter_line(const IterRecord& r);
std::string format_iter_json(const IterRecord& r);
// "Epoch(val) [3][4/4]    mse: 0.0123  mae: 0.0456" and its JSON record.
std::string format_metrics_line(const std::string& mode, std::int64_t epoch, std::int64_t iters,
                                const std::map<std::string, double>& metrics);
std::string format_metrics_json(std::int64_t epoch, std::int64_t global_iter,
                                const std::map<std::string, double>& metrics);
// The file `ddp3d test` leaves in the work dir (test_metrics.json): what was evaluated, how
// long the evaluation took (wall_time_s, samples_per_s) and the metrics, values with 17
// significant digits so they compare exactly.
std::string format_test_metrics_json(const std::string& config, const std::string& checkpoint,
                                     int world_size, std::int64_t samples, double wall_seconds,
                                     const std::map<std::string, double>& metrics);

class TrainLog {
 public:
  // `run_dir`: <work_dir>/<timestamp>; files are created only when `enabled`. Scalars and
  // pictures go to the `vis_backends` named (vis_backend.h's types, the config's
  // visualizer.vis_backends).
  TrainLog(bool enabled, const std::filesystem::path& run_dir, const std::string& timestamp,
           const std::vector<std::string>& vis_backends = {"LocalVisBackend"});
  bool enabled() const { return enabled_; }
  // A human line to stderr (through ddp3d::log) and the .log file.
  void info(const std::string& line);
  void warning(const std::string& line);
  void iteration(const IterRecord& r);
  void metrics(const std::string& mode, std::int64_t epoch, std::int64_t iters,
               std::int64_t global_iter, const std::map<std::string, double>& metrics);
  // Training starts (at step 1) or resumes (at the checkpoint's iteration + 1).
  void training_starts_at(std::int64_t step);
  // A PNG picture to the backends (TensorBoard's image dashboard, LocalVisBackend's vis_image).
  void image(const std::string& tag, std::int64_t step, std::string_view png);
  const std::filesystem::path& log_file() const { return log_path_; }
  const std::filesystem::path& scalars_file() const { return json_path_; }

 private:
  void to_file(const std::string& level, const std::string& line);
  bool enabled_;
  std::filesystem::path log_path_;
  std::filesystem::path json_path_;
  std::ofstream log_;
  std::vector<std::unique_ptr<VisBackend>> vis_backends_;
};

}  // namespace ddp3d::engine
