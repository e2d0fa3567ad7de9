// What a single-stage detector needs of its dense head (mmdet3d's Base3DDenseHead): the
// training losses and the detections, both from the neck's BEV feature map. Anchor3DHead is
// one; head_registry() builds any registered one by model.bbox_head.type.
#pragma once

#include <torch/nn/module.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "worker/config/registry.h"

namespace ddp3d::models {

// Boxes of one sample after inference.
struct Detections {
  at::Tensor boxes;   // [K, 7] LiDAR boxes (x, y, z_bottom, dx, dy, dz, yaw)
  at::Tensor scores;  // [K]
  at::Tensor labels;  // [K] int64
};

using LossMap = std::map<std::string, at::Tensor>;

class DenseHeadImpl : public torch::nn::Module {
 public:
  // features [B, in_channels, H, W]; gt_boxes[b] [G_b, 7] LiDAR boxes, gt_labels[b] [G_b]
  // int64 class indices. Every entry of the map is a loss term the optimizer minimises.
  virtual LossMap loss(const at::Tensor& features, const std::vector<at::Tensor>& gt_boxes,
                       const std::vector<at::Tensor>& gt_labels) = 0;
  // One Detections per sample of the batch.
  virtual std::vector<Detections> predict(const at::Tensor& features) = 0;
};

using DenseHeadPtr = std::shared_ptr<DenseHeadImpl>;
// Builds the head when the detector reaches it (parameters are initialised in module order,
// so the head is made after the neck, whoever provides it).
using DenseHeadFactory = std::function<DenseHeadPtr()>;

// model.bbox_head types: Anchor3DHead, and what a test or another library adds (with its schema
// in config::component_schemas(), kind "bbox_head"). A factory gets the whole `model` node: a
// head reads model.train_cfg and model.test_cfg too, as mmdet3d's detectors hand them over.
// Build with head_registry().build(model, "bbox_head.type").
config::Registry<DenseHeadImpl>& head_registry();

}  // namespace ddp3d::models
