#include "worker/models/losses/smooth_l1_loss.h"

#include <ATen/ATen.h>

#include "worker/models/losses/weighted_reduce.h"

namespace ddp3d::models {

at::Tensor SmoothL1Loss::operator()(const at::Tensor& pred, const at::Tensor& target,
                                    const at::Tensor& weight, double avg_factor) const {
  TORCH_CHECK(pred.sizes() == target.sizes(), "SmoothL1Loss: pred ", pred.sizes(), " and target ",
              target.sizes(), " differ in shape");
  const double beta = options_.beta;
  const at::Tensor diff = (pred - target).abs();
  const at::Tensor loss = at::where(diff < beta, 0.5 * diff * diff / beta, diff - 0.5 * beta);
  return options_.loss_weight * weighted_sum_over(loss, weight, avg_factor);
}

}  // namespace ddp3d::models
