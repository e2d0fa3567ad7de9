#include "worker/models/losses/cross_entropy_loss.h"

#include <ATen/ATen.h>

#include "worker/models/losses/weighted_reduce.h"

namespace ddp3d::models {

at::Tensor CrossEntropyLoss::operator()(const at::Tensor& logits, const at::Tensor& labels,
                                        const at::Tensor& weight, double avg_factor) const {
  TORCH_CHECK(logits.dim() == 2, "CrossEntropyLoss: logits must be [N, K], got ", logits.sizes());
  TORCH_CHECK(labels.dim() == 1 && labels.size(0) == logits.size(0),
              "CrossEntropyLoss: labels must be [", logits.size(0), "], got ", labels.sizes());
  const at::Tensor nll = -at::log_softmax(logits, 1).gather(1, labels.to(at::kLong).view({-1, 1}));
  const at::Tensor w = weight.defined() ? weight.to(logits.dtype()) : at::Tensor();
  return options_.loss_weight * weighted_sum_over(nll.view({-1}), w, avg_factor);
}

}  // namespace ddp3d::models
