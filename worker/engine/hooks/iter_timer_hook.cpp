#include "worker/engine/hooks/iter_timer_hook.h"

namespace ddp3d::engine {
namespace {

double seconds(IterTimerHook::Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

}  // namespace

void IterTimerHook::before_train_epoch(LoopContext& /*loop*/) {
  last_ = now_();
}

void IterTimerHook::before_train_iter(LoopContext& /*loop*/, TrainIter& iter) {
  iter.data_seconds = seconds(now_() - last_);
}

void IterTimerHook::after_train_iter(LoopContext& /*loop*/, TrainIter& iter) {
  const Clock::time_point now = now_();
  iter.iter_seconds = seconds(now - last_);
  last_ = now;
}

}  // namespace ddp3d::engine
