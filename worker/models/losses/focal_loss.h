// Sigmoid focal loss (Lin et al. 2017; mmdet.FocalLoss with use_sigmoid=True).
#pragma once

#include <ATen/core/Tensor.h>

#include "worker/models/pointpillars/options.h"

namespace ddp3d::models {

class FocalLoss {
 public:
  explicit FocalLoss(FocalLossOptions options) : options_(options) {}
  // logits [N, C]; labels [N] int64 in [0, C], C meaning background (all-zero target);
  // weight [N] per sample (or undefined). Returns loss_weight · Σ / avg_factor.
  at::Tensor operator()(const at::Tensor& logits, const at::Tensor& labels,
                        const at::Tensor& weight, double avg_factor) const;

 private:
  FocalLossOptions options_;
};

}  // namespace ddp3d::models
