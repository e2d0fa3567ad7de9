// A dense head that no worker library has, for plugin_backbone_test: one 1×1 conv to a class
// heatmap, trained towards zero (a loss with a gradient, not a detector), predicting no boxes.
// It counts its builds, losses and predictions, so a test can tell that it, not Anchor3DHead,
// ran.
#pragma once

#include <torch/nn/modules/conv.h>

#include <cstdint>
#include <vector>

#include "worker/models/dense_heads/dense_head.h"

namespace ddp3d::testing {

class TinyHeadImpl : public models::DenseHeadImpl {
 public:
  TinyHeadImpl(std::int64_t in_channels, std::int64_t num_classes);
  models::LossMap loss(const at::Tensor& features, const std::vector<at::Tensor>& gt_boxes,
                       const std::vector<at::Tensor>& gt_labels) override;
  std::vector<models::Detections> predict(const at::Tensor& features) override;

  static inline int builds = 0;
  static inline int losses = 0;
  static inline int predictions = 0;

 private:
  torch::nn::Conv2d conv_{nullptr};
};

// Registers bbox_head "TinyHead": its schema (in_channels, num_classes) in
// config::component_schemas() and its factory in models::head_registry().
void register_tiny_head();

}  // namespace ddp3d::testing
