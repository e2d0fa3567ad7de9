// Dynamic loss scaling for fp16 mixed precision (torch.cuda.amp.GradScaler's policy): the loss
// is multiplied by `scale` before backward; gradients are unscaled before clipping and the
// step; a step whose gradients hold inf/NaN is skipped and the scale backs off, and after
// `growth_interval` clean steps in a row the scale grows. The policy is pure logic (tested on
// CPU); unscale_and_check works on tensors of any device.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace ddp3d::engine {

struct LossScalerOptions {
  double init_scale = 65536.0;
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  std::int64_t growth_interval = 2000;
};

class DynamicLossScaler {
 public:
  explicit DynamicLossScaler(const LossScalerOptions& options = {});

  double scale() const { return scale_; }
  std::int64_t growth_tracker() const { return growth_tracker_; }

  // Divides every defined gradient by scale() in place; returns true when any is inf or NaN.
  // Call on the all-reduced gradients so every rank makes the same decision.
  bool unscale_and_check(const std::vector<at::Tensor>& grads) const;

  // Records the outcome of one optimizer step; returns true when the step must be applied
  // (no inf/NaN found), false when it must be skipped.
  bool update(bool found_inf);

  // For checkpoints.
  void load_state(double scale, std::int64_t growth_tracker);

 private:
  LossScalerOptions options_;
  double scale_;
  std::int64_t growth_tracker_ = 0;
};

}  // namespace ddp3d::engine
