// The training-progress samples the operator reads from a worker's /metrics: a small parser
// of the Prometheus text format that extracts three series and ignores everything else. The
// body comes from a pod, so it is untrusted: malformed lines are skipped, non-finite or
// negative values are not taken, nothing is allocated per line.
#pragma once

#include <optional>
#include <string_view>

namespace ddp3d::op::controller {

inline constexpr std::string_view kStepsSeries = "ddp3d_train_steps_total";
inline constexpr std::string_view kEpochSeries = "ddp3d_train_epoch";
inline constexpr std::string_view kMaxStepsSeries = "ddp3d_train_max_steps";

struct ProgressMetrics {
  std::optional<double> steps;      // training steps done (counter)
  std::optional<double> epoch;      // gauge
  std::optional<double> max_steps;  // planned training steps (gauge); absent on old workers
  bool operator==(const ProgressMetrics&) const = default;
};

// The first valid sample of each series (any labels). A value that is NaN, infinite,
// negative or above 2^53 (not an exact step count) is ignored, as if the sample were absent.
ProgressMetrics parse_progress_metrics(std::string_view text);

}  // namespace ddp3d::op::controller
