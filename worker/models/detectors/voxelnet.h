// VoxelNet-style single-stage detector as mmdet3d's `PointPillars` (a VoxelNet):
// PillarFeatureNet → PointPillarsScatter → SECOND → SECONDFPN → Anchor3DHead, each part
// replaceable by another of its kind (VoxelNetParts; the model registry builds them by `type`).
// Inputs are pillars already voxelized by the data pipeline:
//   voxels [M, P, 4] (x, y, z, r, zero-padded), num_points [M], coors [M, 4] (batch, z, y, x).
#pragma once

#include <torch/nn/module.h>

#include <vector>

#include "worker/models/backbones/backbone.h"
#include "worker/models/dense_heads/dense_head.h"
#include "worker/models/middle_encoders/middle_encoder.h"
#include "worker/models/necks/neck.h"
#include "worker/models/pointpillars/options.h"
#include "worker/models/voxel_encoders/voxel_encoder.h"

namespace ddp3d::models {

// Factories for a VoxelNet's parts. A part without one is built from the options as the type
// they name by default (PillarFeatureNet, PointPillarsScatter, SECOND, SECONDFPN,
// Anchor3DHead); another type needs its factory.
struct VoxelNetParts {
  VoxelEncoderFactory voxel_encoder;
  MiddleEncoderFactory middle_encoder;
  BackboneFactory backbone;
  NeckFactory neck;
  DenseHeadFactory head;
};

class VoxelNetImpl : public torch::nn::Module {
 public:
  // Validates the options (std::invalid_argument naming the key) and builds the parts in
  // mmdet3d's order (which fixes how their parameters are initialised).
  explicit VoxelNetImpl(PointPillarsOptions options, const VoxelNetParts& parts = {});

  // The neck's BEV feature map [B, Σ neck channels, H, W] (mmdet3d's extract_feat).
  at::Tensor extract_feat(const at::Tensor& voxels, const at::Tensor& num_points,
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
  VoxelEncoderPtr voxel_encoder() const { return voxel_encoder_; }
  MiddleEncoderPtr middle_encoder() const { return middle_encoder_; }
  BackbonePtr backbone() const { return backbone_; }
  NeckPtr neck() const { return neck_; }
  DenseHeadPtr bbox_head() const { return bbox_head_; }

 private:
  PointPillarsOptions options_;
  VoxelEncoderPtr voxel_encoder_;
  MiddleEncoderPtr middle_encoder_;
  BackbonePtr backbone_;
  NeckPtr neck_;
  DenseHeadPtr bbox_head_;
};
TORCH_MODULE(VoxelNet);

// mmdet3d calls this configuration of VoxelNet "PointPillars".
using PointPillars = VoxelNet;

// Σ of a loss map: what the optimizer minimises.
at::Tensor total_loss(const LossMap& losses);

// Number of trainable parameters (what mmdet3d's model summary reports).
int64_t count_parameters(const torch::nn::Module& module);

}  // namespace ddp3d::models
