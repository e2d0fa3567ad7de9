// mmengine's IterTimerHook: how long each iteration took and how much of it waited for data.
// Publishes TrainIter::data_seconds (from the end of the previous iteration, or the start of the
// epoch, to before_train_iter: the batch fetch) and TrainIter::iter_seconds (to after_train_iter)
// for the hooks after it (register it before LoggerHook and TelemetryHook).
#pragma once

#include <chrono>

#include "worker/engine/hook.h"

namespace ddp3d::engine {

class IterTimerHook final : public Hook {
 public:
  using Clock = std::chrono::steady_clock;
  // `now`: the clock (tests pass a fake one).
  explicit IterTimerHook(Clock::time_point (*now)() = &Clock::now) : now_(now) {}

  void before_train_epoch(LoopContext& loop) override;
  void before_train_iter(LoopContext& loop, TrainIter& iter) override;
  void after_train_iter(LoopContext& loop, TrainIter& iter) override;

 private:
  Clock::time_point (*now_)();
  Clock::time_point last_{};  // end of the previous iteration (or start of the epoch)
};

}  // namespace ddp3d::engine
