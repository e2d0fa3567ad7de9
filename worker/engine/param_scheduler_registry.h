// param_scheduler entries → SchedulePhase by `type` (mmengine's scheduler names). Built in:
// StepLR, MultiStepLR, LinearLR, ConstantLR, CosineAnnealingLR and their *Momentum twins. A
// new scheduler is a ScheduleRule, its keys (kind "param_scheduler", after
// param_scheduler_fields' common ones) and one add() here or from its own library.
#pragma once

#include <memory>

#include "worker/config/config.h"
#include "worker/config/registry.h"
#include "worker/engine/param_schedule.h"

namespace ddp3d::engine {

config::Registry<SchedulePhase>& param_scheduler_registry();

// A phase of `param` with `rule` and the keys every scheduler has (by_epoch, begin, end,
// convert_to_iter_based) read from its node.
std::shared_ptr<SchedulePhase> schedule_phase(const config::Config& node, ScheduledParam param,
                                              std::shared_ptr<const ScheduleRule> rule);

}  // namespace ddp3d::engine
