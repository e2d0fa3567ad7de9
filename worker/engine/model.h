// The model interface the runner trains and evaluates. A model is a torch::nn::Module (its
// parameters, buffers and state_dict come from there) with a training and a prediction entry.
#pragma once

#include <torch/nn/module.h>

#include <map>
#include <string>
#include <vector>

#include "worker/engine/sample.h"

namespace ddp3d::engine {

// Named loss terms, e.g. {"loss_cls": ..., "loss_bbox": ..., "loss_dir": ...}. Scalars (0-dim).
// Ordered, so the sum and the log columns are the same on every rank.
using LossMap = std::map<std::string, at::Tensor>;

class Model : public torch::nn::Module {
 public:
  // Forward in training mode; returns every loss term. The runner back-propagates the sum of
  // the entries whose name contains "loss" (mmengine's parse_losses rule) and logs all entries
  // (other entries, e.g. "acc", are logged only).
  virtual LossMap forward_train(const Batch& batch) = 0;
  // Inference; one result per sample of the batch, in batch order (e.g. "bboxes_3d",
  // "scores_3d", "labels_3d" for a detector). Called under no-grad, in eval mode.
  virtual std::vector<Sample> predict(const Batch& batch) = 0;
};

// The sum of the entries of `losses` whose name contains "loss"; throws std::invalid_argument
// when there is none or one is not a scalar.
at::Tensor total_loss(const LossMap& losses);

}  // namespace ddp3d::engine
