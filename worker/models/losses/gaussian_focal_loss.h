// CornerNet's focal loss on Gaussian heatmap targets (mmdet.GaussianFocalLoss): a peak cell
// (target exactly 1) costs -log(p)·(1-p)^alpha, any other cell -log(1-p)·p^alpha·(1-target)^gamma,
// so cells near a peak are spared in proportion to their Gaussian.
#pragma once

#include <ATen/core/Tensor.h>

#include "worker/models/centerpoint/options.h"

namespace ddp3d::models {

class GaussianFocalLoss {
 public:
  explicit GaussianFocalLoss(GaussianFocalLossOptions options) : options_(options) {}
  // pred: probabilities in (0, 1); target: the Gaussian heatmap, same shape. Returns
  // loss_weight · Σ / avg_factor (mmdet3d's CenterHead passes max(#peaks, 1)).
  at::Tensor operator()(const at::Tensor& pred, const at::Tensor& target, double avg_factor) const;

 private:
  GaussianFocalLossOptions options_;
};

}  // namespace ddp3d::models
