// What a person reads when a run ends: wall time, throughput, the best validation and, for
// KITTI metrics, a small AP table (3D, BEV and AOS per difficulty), as lines for the log and
// as JSON for the work dir. Pure formatting; the train hook and `ddp3d test` feed it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "worker/engine/metric_map.h"

namespace ddp3d::engine {

struct ValidationRecord {
  std::int64_t epoch = 0;  // epochs completed when it ran
  std::int64_t iter = 0;   // iterations completed when it ran
  MetricMap metrics;
};

struct RunSummary {
  std::string mode = "train";          // "train" or "test"
  double wall_seconds = 0;             // this process's run, from the first step to the last
  std::int64_t samples = 0;            // samples trained or evaluated by all ranks in that time
  std::int64_t epochs = 0;             // epochs completed at the end (train)
  std::int64_t iters = 0;              // iterations completed at the end (train)
  std::optional<std::string> stopped;  // why training ended early, if it did
  std::vector<ValidationRecord> validations;  // train: every validation of this run, in order
  MetricMap metrics;                          // test: the metrics
  std::optional<KeyMetric> key;               // ranks the validations
};

// The validation with the best finite value of `key` (the earliest among equals); nullopt
// when no validation has one.
std::optional<std::size_t> best_validation(const std::vector<ValidationRecord>& validations,
                                           const KeyMetric& key);

// KITTI metrics (`KITTI/<class>_<3D|BEV|AOS>_<AP40|AP11>_<difficulty>[_strict|_loose]`) as a
// table of AP40 (AP11 when no AP40 is there), strict overlap, one row per class and kind, one
// column per difficulty; empty when `metrics` has no such key. Missing values show as "-".
std::vector<std::string> format_ap_table(const MetricMap& metrics);

// The summary's lines: a headline (time, samples/s, best epoch or the stop reason), then the
// AP table of the best validation (train) or of the metrics (test), or the metrics in one line
// when they are not KITTI's.
std::vector<std::string> format_run_summary(const RunSummary& summary);

// The same as one JSON object: mode, wall_time_s, samples, samples_per_s, epochs, iters,
// stopped, key_metric, best ({epoch, iter, value}), and the metrics shown (17 digits, NaN as
// null).
std::string format_run_summary_json(const RunSummary& summary);

}  // namespace ddp3d::engine
