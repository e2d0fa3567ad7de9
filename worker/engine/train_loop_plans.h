// mmengine's two training loops as plans (loop_plan.h).
#pragma once

#include <cstdint>

#include "worker/engine/loop_plan.h"

namespace ddp3d::engine {

// max_epochs passes over the data, validating after epochs.
class EpochBasedTrainLoop final : public LoopPlan {
 public:
  EpochBasedTrainLoop(std::int64_t max_epochs, ValidationRule val);
  void set_limits(LoopProgress& progress) const override;
  bool validate_after_epoch(const LoopProgress& progress) const override;
  bool validate_after_iter(const LoopProgress& /*progress*/) const override { return false; }

 private:
  std::int64_t max_epochs_;
  ValidationRule val_;
};

// max_iters iterations, passing over the data as often as they take (the last pass ends inside
// the data, without its after_train_epoch), validating after iterations.
class IterBasedTrainLoop final : public LoopPlan {
 public:
  IterBasedTrainLoop(std::int64_t max_iters, ValidationRule val);
  void set_limits(LoopProgress& progress) const override;
  bool validate_after_epoch(const LoopProgress& /*progress*/) const override { return false; }
  bool validate_after_iter(const LoopProgress& progress) const override;

 private:
  std::int64_t max_iters_;
  ValidationRule val_;
};

}  // namespace ddp3d::engine
