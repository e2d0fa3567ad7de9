// train_cfg's loop (mmengine's TRAIN_LOOPS): how long a run trains and when it validates. The
// train loop (train_loop.h) runs the passes over the data and calls the hooks; the plan that
// train_cfg names sets its limits and says when validation is due. Built in: EpochBasedTrainLoop
// and IterBasedTrainLoop (train_loop_plans.h). A new loop kind is a LoopPlan, its keys
// (component kind "train_loop", after train_loop_fields' common ones, train_loop_schemas.h) and
// one add() to train_loop_registry() (train_loop_registry.h).
#pragma once

#include <cstdint>

#include "worker/engine/loop_progress.h"

namespace ddp3d::engine {

class LoopPlan {
 public:
  virtual ~LoopPlan() = default;
  // Sets the limits of `progress` (max_epochs, iteration_limit) for its iters_per_epoch.
  virtual void set_limits(LoopProgress& progress) const = 0;
  // Whether to validate after the epoch that `progress.epochs_completed` has just counted.
  virtual bool validate_after_epoch(const LoopProgress& progress) const = 0;
  // Whether to validate after the iteration that `progress.global_iter` has just counted.
  virtual bool validate_after_iter(const LoopProgress& progress) const = 0;
};

// mmengine's val_begin and val_interval: validate when `done` (epochs or iterations) has
// reached `begin` and is a multiple of `interval`, and always at the `last` one.
struct ValidationRule {
  std::int64_t interval = 1;
  std::int64_t begin = 1;
  bool due(std::int64_t done, std::int64_t last) const {
    return done >= begin && (done % interval == 0 || done == last);
  }
};

}  // namespace ddp3d::engine
