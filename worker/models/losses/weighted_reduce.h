// mmdet's weight_reduce_loss with reduction='mean' and an avg_factor: Σ(loss · weight) divided
// by avg_factor (+ float32 eps, so an avg_factor of 0 gives 0, not NaN).
#pragma once

#include <ATen/core/Tensor.h>

namespace ddp3d::models {

at::Tensor weighted_sum_over(const at::Tensor& loss, const at::Tensor& weight, double avg_factor);

}  // namespace ddp3d::models
