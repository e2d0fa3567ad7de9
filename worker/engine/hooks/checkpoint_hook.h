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
//   save_last               after the last epoch, unless the interval just saved there.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>

#include "worker/engine/hook.h"
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
};

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
  void after_save_checkpoint(LoopContext& loop, const SavedCheckpoint& saved) override;

  // True when an epoch checkpoint is due after `epochs_done` of `max_epochs`.
  bool due(std::int64_t epochs_done, std::int64_t max_epochs) const;

 private:
  bool time_due(LoopContext& loop);

  CheckpointHookOptions options_;
  TrainLog& log_;
  AnyRank any_rank_;
  Clock clock_;
  double last_save_ = 0;         // clock_() at the start or at the last checkpoint
  std::int64_t saved_slot_ = 0;  // global_iter / interval of the last iteration checkpoint
  std::int64_t last_saved_iter_ = -1;
};

}  // namespace ddp3d::engine
