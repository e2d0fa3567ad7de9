// Softmax cross-entropy (mmdet.CrossEntropyLoss, use_sigmoid=False); the head uses it for the
// two-bin direction classifier.
#pragma once

#include <ATen/core/Tensor.h>

#include "worker/models/pointpillars/options.h"

namespace ddp3d::models {

class CrossEntropyLoss {
 public:
  explicit CrossEntropyLoss(CrossEntropyLossOptions options) : options_(options) {}
  // logits [N, K], labels [N] int64, weight [N] (or undefined).
  at::Tensor operator()(const at::Tensor& logits, const at::Tensor& labels,
                        const at::Tensor& weight, double avg_factor) const;

 private:
  CrossEntropyLossOptions options_;
};

}  // namespace ddp3d::models
