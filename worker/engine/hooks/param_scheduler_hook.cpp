#include "worker/engine/hooks/param_scheduler_hook.h"

#include <optional>
#include <utility>

namespace ddp3d::engine {

ParamSchedulerHook::ParamSchedulerHook(ParamSchedule schedule, OptimWrapper& optim)
    : schedule_(std::move(schedule)), optim_(optim) {}

void ParamSchedulerHook::before_train_iter(LoopContext& loop, TrainIter& /*iter*/) {
  const std::int64_t i = loop.progress().global_iter;
  const double lr = schedule_.value(ScheduledParam::kLr, optim_.base_lr(), i);
  std::optional<double> momentum;
  if (schedule_.schedules(ScheduledParam::kMomentum))
    momentum = schedule_.value(ScheduledParam::kMomentum, optim_.base_momentum(), i);
  optim_.set_lr_momentum(lr, momentum);
}

}  // namespace ddp3d::engine
