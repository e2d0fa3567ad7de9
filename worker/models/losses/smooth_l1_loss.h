// Smooth L1 loss (mmdet.SmoothL1Loss): 0.5·d²/β below β, d - 0.5·β above.
#pragma once

#include <ATen/core/Tensor.h>

#include "worker/models/pointpillars/options.h"

namespace ddp3d::models {

class SmoothL1Loss {
 public:
  explicit SmoothL1Loss(SmoothL1LossOptions options) : options_(options) {}
  // pred, target, weight: same shape. Returns loss_weight · Σ(w · l) / avg_factor.
  at::Tensor operator()(const at::Tensor& pred, const at::Tensor& target, const at::Tensor& weight,
                        double avg_factor) const;

 private:
  SmoothL1LossOptions options_;
};

}  // namespace ddp3d::models
