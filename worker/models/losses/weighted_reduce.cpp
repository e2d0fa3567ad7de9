#include "worker/models/losses/weighted_reduce.h"

#include <ATen/ATen.h>

#include <limits>

namespace ddp3d::models {

at::Tensor weighted_sum_over(const at::Tensor& loss, const at::Tensor& weight, double avg_factor) {
  const at::Tensor weighted = weight.defined() ? loss * weight : loss;
  return weighted.sum() / (avg_factor + static_cast<double>(std::numeric_limits<float>::epsilon()));
}

}  // namespace ddp3d::models
