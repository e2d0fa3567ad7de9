#include "worker/models/losses/gaussian_focal_loss.h"

#include <ATen/ATen.h>

#include "worker/models/losses/weighted_reduce.h"

namespace ddp3d::models {

at::Tensor GaussianFocalLoss::operator()(const at::Tensor& pred, const at::Tensor& target,
                                         double avg_factor) const {
  TORCH_CHECK(pred.sizes() == target.sizes(), "GaussianFocalLoss: pred ", pred.sizes(),
              " and target ", target.sizes(), " differ");
  constexpr double kEps = 1e-12;  // mmdet's: log(0) is never taken
  const at::Tensor pos = target.eq(1).to(pred.scalar_type());
  const at::Tensor neg = (1 - target).pow(options_.gamma);
  const at::Tensor pos_loss = -(pred + kEps).log() * (1 - pred).pow(options_.alpha) * pos;
  const at::Tensor neg_loss = -(1 - pred + kEps).log() * pred.pow(options_.alpha) * neg;
  return options_.loss_weight * weighted_sum_over(pos_loss + neg_loss, at::Tensor(), avg_factor);
}

}  // namespace ddp3d::models
