#include "worker/models/losses/focal_loss.h"

#include <ATen/ATen.h>

#include "worker/models/losses/weighted_reduce.h"

namespace ddp3d::models {

at::Tensor FocalLoss::operator()(const at::Tensor& logits, const at::Tensor& labels,
                                 const at::Tensor& weight, double avg_factor) const {
  TORCH_CHECK(logits.dim() == 2, "FocalLoss: logits must be [N, C], got ", logits.sizes());
  TORCH_CHECK(labels.dim() == 1 && labels.size(0) == logits.size(0), "FocalLoss: labels must be [",
              logits.size(0), "], got ", labels.sizes());
  const int64_t c = logits.size(1);
  // One-hot over C + 1 classes, background column dropped.
  const at::Tensor target =
      at::one_hot(labels.to(at::kLong), c + 1).narrow(1, 0, c).to(logits.dtype());
  const at::Tensor p = at::sigmoid(logits);
  const at::Tensor pt = (1 - p) * target + p * (1 - target);
  const double a = options_.alpha;
  const at::Tensor focal_weight = (a * target + (1 - a) * (1 - target)) * pt.pow(options_.gamma);
  const at::Tensor bce =
      at::binary_cross_entropy_with_logits(logits, target, {}, {}, at::Reduction::None);
  const at::Tensor w = weight.defined() ? weight.to(logits.dtype()).view({-1, 1}) : at::Tensor();
  return options_.loss_weight * weighted_sum_over(bce * focal_weight, w, avg_factor);
}

}  // namespace ddp3d::models
