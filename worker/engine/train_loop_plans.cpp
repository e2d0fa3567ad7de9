#include "worker/engine/train_loop_plans.h"

#include <stdexcept>
#include <string>

namespace ddp3d::engine {
namespace {

void check(std::int64_t limit, std::int64_t least, std::int64_t iters_per_epoch, const char* what) {
  if (limit < least) {
    throw std::invalid_argument(std::string(what) + " must be >= " + std::to_string(least));
  }
  if (iters_per_epoch < 1) throw std::invalid_argument("iters_per_epoch must be >= 1");
}

}  // namespace

EpochBasedTrainLoop::EpochBasedTrainLoop(std::int64_t max_epochs, ValidationRule val)
    : max_epochs_(max_epochs), val_(val) {}

void EpochBasedTrainLoop::set_limits(LoopProgress& progress) const {
  check(max_epochs_, 0, progress.iters_per_epoch, "EpochBasedTrainLoop: max_epochs");
  progress.max_epochs = max_epochs_;
  progress.iteration_limit = 0;
}

bool EpochBasedTrainLoop::validate_after_epoch(const LoopProgress& progress) const {
  return val_.due(progress.epochs_completed, progress.max_epochs);
}

IterBasedTrainLoop::IterBasedTrainLoop(std::int64_t max_iters, ValidationRule val)
    : max_iters_(max_iters), val_(val) {}

void IterBasedTrainLoop::set_limits(LoopProgress& progress) const {
  check(max_iters_, 1, progress.iters_per_epoch, "IterBasedTrainLoop: max_iters");
  const std::int64_t per_pass = progress.iters_per_epoch;
  progress.iteration_limit = max_iters_;
  // Rounded up without max_iters + per_pass - 1, which overflows near INT64_MAX.
  progress.max_epochs = max_iters_ / per_pass + (max_iters_ % per_pass != 0 ? 1 : 0);
}

bool IterBasedTrainLoop::validate_after_iter(const LoopProgress& progress) const {
  return val_.due(progress.global_iter, progress.max_iters());
}

}  // namespace ddp3d::engine
