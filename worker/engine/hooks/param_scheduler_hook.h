// mmengine's ParamSchedulerHook: before every iteration, sets the optimizer's lr (and momentum,
// when a schedule covers it) to the schedule's value at that global iteration. The value is a
// pure function of the iteration (param_schedule.h), so a resumed run needs only the counter.
#pragma once

#include "worker/engine/hook.h"
#include "worker/engine/optim_wrapper.h"
#include "worker/engine/param_schedule.h"

namespace ddp3d::engine {

class ParamSchedulerHook final : public Hook {
 public:
  // `optim` must outlive the hook.
  ParamSchedulerHook(ParamSchedule schedule, OptimWrapper& optim);

  void before_train_iter(LoopContext& loop, TrainIter& iter) override;

 private:
  ParamSchedule schedule_;
  OptimWrapper& optim_;
};

}  // namespace ddp3d::engine
