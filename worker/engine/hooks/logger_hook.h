// mmengine's LoggerHook: every `interval` iterations (and at the end of each epoch) the window
// means of the loss terms, time and data_time are averaged across ranks (one small all-reduce,
// so every rank takes part) and written to the training log (rank 0's is the enabled one);
// validation metrics after each evaluation; a warning for each fp16 step skipped on inf/NaN.
// Reads TrainIter::iter_seconds/data_seconds (register it after IterTimerHook) and publishes
// TrainIter::window_mean_loss on the iterations it logs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "worker/engine/hook.h"
#include "worker/engine/train_log.h"

namespace ddp3d::dist {
class ProcessGroup;
}

namespace ddp3d::engine {

class LoggerHook final : public Hook {
 public:
  // `log` must outlive the hook; `pg` null: one process. Throws std::invalid_argument for
  // interval < 1.
  LoggerHook(TrainLog& log, dist::ProcessGroup* pg, std::int64_t interval);

  void before_train_epoch(LoopContext& loop) override;
  void after_train_iter(LoopContext& loop, TrainIter& iter) override;
  void after_val(LoopContext& loop, const ValResult& result) override;

 private:
  void add_to_window(const TrainIter& iter);
  void reset_window();

  TrainLog& log_;
  dist::ProcessGroup* pg_;
  std::int64_t interval_;
  // The window since the last logged iteration: sums of each loss term (names from the first
  // iteration), of time and of data_time.
  std::vector<std::string> names_;
  std::vector<double> loss_sums_;
  double time_sum_ = 0;
  double data_time_sum_ = 0;
  std::int64_t count_ = 0;
};

}  // namespace ddp3d::engine
