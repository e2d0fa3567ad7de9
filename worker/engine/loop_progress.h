// Where training stands (mmengine's runner.epoch / runner.iter): the counters the train loop
// advances and every hook reads.
#pragma once

#include <cstdint>

namespace ddp3d::engine {

struct LoopProgress {
  // 0-based epoch being trained; after after_train_epoch it counts the epochs completed (so
  // during validation and after_train it is the number of epochs done).
  std::int64_t epoch = 0;
  std::int64_t iter_in_epoch = 0;  // 0-based iteration within the epoch being trained
  // Iterations completed; during an iteration's hooks, that iteration's 0-based global index.
  std::int64_t global_iter = 0;
  std::int64_t epochs_completed = 0;  // whole epochs done (checkpoints record this)
  std::int64_t iters_per_epoch = 0;
  // The limits, set by the run's loop plan (loop_plan.h). The epochs the loop may start:
  // max_epochs of an EpochBasedTrainLoop, or the passes over the data an IterBasedTrainLoop
  // needs for its iterations (the last one may end early).
  std::int64_t max_epochs = 0;
  // IterBasedTrainLoop's max_iters; 0 for an EpochBasedTrainLoop, which ends after max_epochs.
  std::int64_t iteration_limit = 0;
  bool by_epoch() const { return iteration_limit == 0; }
  std::int64_t max_iters() const {
    return by_epoch() ? max_epochs * iters_per_epoch : iteration_limit;
  }
};

}  // namespace ddp3d::engine
