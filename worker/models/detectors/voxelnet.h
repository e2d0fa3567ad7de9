// VoxelNet-style single-stage detector as mmdet3d's `PointPillars` (a VoxelNet):
// PillarFeatureNet → PointPillarsScatter → SECOND (or another registered backbone) → SECONDFPN
// → Anchor3DHead.
// Inputs are pillars already voxelized by the data pipeline:
//   voxels [M, P, 4] (x, y, z, r, zero-padded), num_points [M], coors [M, 4] (batch, z, y, x).
#pragma once

#include <torch/nn/module.h>

#include <vector>

#include "worker/models/backbones/backbone.h"
#include "worker/models/dense_heads/anchor3d_head.h"
#include "worker/models/middle_encoders/pointpillars_scatter.h"
#include "worker/models/necks/second_fpn.h"
#include "worker/models/pointpillars_options.h"
#include "worker/models/voxel_encoders/pillar_feature_net.h"

namespace ddp3d::models {

class VoxelNetImpl : public torch::nn::Module {
 public:
  // Validates the options (std::invalid_argument naming the key) and builds the modules; the
  // backbone with `backbone` when given, else SECOND from options.backbone.
  explicit VoxelNetImpl(PointPillarsOptions options, const BackboneFactory& backbone = {});

  // BEV feature map [B, Σ neck channels, H, W] → head outputs.
  HeadOutputs forward(const at::Tensor& voxels, const at::Tensor& num_points,
                      const at::Tensor& coors, int64_t batch_size);

  // Training losses ("loss_cls", "loss_bbox", "loss_dir") for a batch of gt_boxes.size()
  // samples: gt_boxes[b] [G_b, 7] LiDAR boxes, gt_labels[b] [G_b] class indices.
  LossMap forward_train(const at::Tensor& voxels, const at::Tensor& num_points,
                        const at::Tensor& coors, const std::vector<at::Tensor>& gt_boxes,
                        const std::vector<at::Tensor>& gt_labels);

  // Inference (no autograd): one Detections per sample.
  std::vector<Detections> predict(const at::Tensor& voxels, const at::Tensor& num_points,
                                  const at::Tensor& coors, int64_t batch_size);

  const PointPillarsOptions& options() const { return options_; }
  PillarFeatureNet voxel_encoder() const { return voxel_encoder_; }
  PointPillarsScatter middle_encoder() const { return middle_encoder_; }
  BackbonePtr backbone() const { return backbone_; }
  SECONDFPN neck() const { return neck_; }
  Anchor3DHead bbox_head() const { return bbox_head_; }

 private:
  PointPillarsOptions options_;
  PillarFeatureNet voxel_encoder_{nullptr};
  PointPillarsScatter middle_encoder_{nullptr};
  BackbonePtr backbone_;
  SECONDFPN neck_{nullptr};
  Anchor3DHead bbox_head_{nullptr};
};
TORCH_MODULE(VoxelNet);

// mmdet3d calls this configuration of VoxelNet "PointPillars".
using PointPillars = VoxelNet;

// Σ of a loss map: what the optimizer minimises.
at::Tensor total_loss(const LossMap& losses);

// Number of trainable parameters (what mmdet3d's model summary reports).
int64_t count_parameters(const torch::nn::Module& module);

}  // namespace ddp3d::models
