// mmengine's CheckpointHook: saves through the loop (which writes the file on rank 0 and calls
// the before/after_save_checkpoint hooks), points <work_dir>/last_checkpoint at every
// checkpoint the loop writes and deletes all but the newest `max_keep` of them.
//
// When it saves:
//   by_epoch (the default)  after every `interval`-th epoch: epoch_<N>.pth
//   !by_epoch               every `interval` iterations (at the first update boundary at or
//                           after each multiple): iter_<N>.pth
//   interval_seconds        also once that many seconds passed since the last checkpoint (any
//                           hook's), at the next update boundary: iter_<N>.pth. Ranks' clocks
//                           differ, so they agree with a 1-element all-reduce at each boundary
//                           (only when this is set); every rank then saves at the same one.
//   save_last               after the last epoch (or iteration), unless the interval just
//                           saved there. An IterBasedTrainLoop ending inside an epoch saves
//                           iter_<max_iters>.pth after it, whatever by_epoch says.
//   save_best               after each validation that improved the named metric ("auto":
//                           the evaluator's key metric): best_<metric>_epoch_<N>.pth (or
//                           _iter_<N>), the previous best file of that metric removed. Only
//                           rank 0 has the metrics; the ranks agree with a 1-element
//                           all-reduce. NaN never improves; a tie keeps the earlier file.
//                           <work_dir>/best_checkpoint records the file, metric and value
//                           (written after the file); a resumed run reads it and keeps
//                           comparing with that best, a fresh run starts over.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "worker/engine/hook.h"
#include "worker/engine/metric_map.h"
#include "worker/engine/train_log.h"

namespace ddp3d::engine {

struct CheckpointHookOptions {
  std::filesystem::path work_dir;
  std::int64_t interval = 1;  // epochs (by_epoch) or iterations; <= 0: none but the last
  int max_keep = -1;          // <= 0: keep all
  bool by_epoch = true;
  bool save_last = true;
  std::optional<double> interval_seconds;  // > 0
  // Iterations per optimizer update: only a boundary between updates is a saving point
  // mid-epoch (a checkpoint inside an accumulation group would lose its gradients).
  std::int64_t accumulative_counts = 1;
  // save_best: a metric name, "auto", or empty (off); rule "greater" | "less" | empty (the
  // key metric's rule when it names the key metric, else greater).
  std::string save_best;
  std::string rule;
  // The evaluator's key metric for a validation's metrics (for "auto" and the default rule).
  std::function<std::optional<KeyMetric>(const MetricMap&)> key_metric;
  // The run resumed: continue from <work_dir>/best_checkpoint's record.
  bool resumed = false;
};

// <work_dir>/best_checkpoint: the best checkpoint's path, its metric and value, one per line.
struct BestCheckpointRecord {
  std::filesystem::path checkpoint;
  std::string metric;
  double score = 0;
};
void write_best_checkpoint_record(const std::filesystem::path& work_dir,
                                  const BestCheckpointRecord& record);
// nullopt when there is none; throws std::runtime_error naming the file when it is malformed.
std::optional<BestCheckpointRecord> read_best_checkpoint_record(
    const std::filesystem::path& work_dir);

class CheckpointHook final : public Hook {
 public:
  // Whether any rank's `mine` is true. The default agrees over the loop's process group;
  // tests inject their own peers.
  using AnyRank = std::function<bool(bool mine)>;
  // Seconds on a monotonic clock (tests inject theirs).
  using Clock = std::function<double()>;

  // `log` must outlive the hook. Throws std::invalid_argument for a non-positive or
  // non-finite interval_seconds or accumulative_counts < 1.
  CheckpointHook(CheckpointHookOptions options, TrainLog& log, AnyRank any_rank = {},
                 Clock clock = {});

  void before_train(LoopContext& loop) override;
  void before_train_iter(LoopContext& loop, TrainIter& iter) override;
  void after_train_epoch(LoopContext& loop) override;
  void after_train(LoopContext& loop) override;
  void after_val(LoopContext& loop, const ValResult& result) override;
  void after_save_checkpoint(LoopContext& loop, const SavedCheckpoint& saved) override;

  // True when an epoch checkpoint is due after `epochs_done` of `max_epochs`.
  bool due(std::int64_t epochs_done, std::int64_t max_epochs) const;

 private:
  // iter_<N>.pth when save_last is on, the last iteration is done and nothing saved there.
  void save_last_iteration(LoopContext& loop);
  bool time_due(LoopContext& loop);
  bool any_rank(LoopContext& loop, bool mine);
  // The metric save_best watches in `metrics` and whether greater is better; nullopt (with a
  // warning, once) when the validation has no such metric.
  std::optional<std::pair<std::string, bool>> best_metric(const MetricMap& metrics);

  CheckpointHookOptions options_;
  TrainLog& log_;
  AnyRank any_rank_;
  Clock clock_;
  double last_save_ = 0;         // clock_() at the start or at the last checkpoint
  std::int64_t saved_slot_ = 0;  // global_iter / interval of the last iteration checkpoint
  std::int64_t last_saved_iter_ = -1;
  // save_best, on rank 0 (the others only take part in the saves).
  std::optional<BestCheckpointRecord> resumed_best_;  // applied once the metric's name is known
  std::optional<double> best_score_;
  std::string best_metric_;
  std::filesystem::path best_checkpoint_;
  std::filesystem::path replaced_best_;  // removed once the new best is written
  bool warned_missing_metric_ = false;
};

}  // namespace ddp3d::engine
