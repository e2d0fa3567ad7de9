#include "worker/models/detectors/voxelnet.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <stdexcept>
#include <string>

#include "worker/models/backbones/second.h"
#include "worker/models/dense_heads/anchor3d_head.h"
#include "worker/models/middle_encoders/pointpillars_scatter.h"
#include "worker/models/necks/second_fpn.h"
#include "worker/models/voxel_encoders/pillar_feature_net.h"

namespace ddp3d::models {

namespace {

// A part of `type` other than the one the options build by default needs its factory.
void expect_factory(bool given, const std::string& key, const std::string& type,
                    const char* default_type) {
  if (!given && type != default_type) {
    throw std::invalid_argument("invalid model option " + key + ": " + type +
                                " needs a factory (VoxelNetParts)");
  }
}

}  // namespace

VoxelNetImpl::VoxelNetImpl(PointPillarsOptions options, const VoxelNetParts& parts)
    : options_(std::move(options)) {
  validate(options_);
  const PointPillarsOptions& o = options_;
  expect_factory(static_cast<bool>(parts.voxel_encoder), "model.voxel_encoder.type",
                 o.voxel_encoder_type, "PillarFeatureNet");
  expect_factory(static_cast<bool>(parts.middle_encoder), "model.middle_encoder.type",
                 o.middle_encoder_type, "PointPillarsScatter");
  expect_factory(static_cast<bool>(parts.backbone), "model.backbone.type", o.backbone_type,
                 "SECOND");
  expect_factory(static_cast<bool>(parts.neck), "model.neck.type", o.neck_type, "SECONDFPN");
  expect_factory(static_cast<bool>(parts.head), "model.bbox_head.type", o.bbox_head_type,
                 "Anchor3DHead");
  voxel_encoder_ = register_module("voxel_encoder",
                                   parts.voxel_encoder
                                       ? parts.voxel_encoder()
                                       : std::make_shared<PillarFeatureNetImpl>(o.voxel_encoder));
  middle_encoder_ = register_module(
      "middle_encoder", parts.middle_encoder
                            ? parts.middle_encoder()
                            : std::make_shared<PointPillarsScatterImpl>(o.middle_encoder));
  backbone_ = register_module(
      "backbone", parts.backbone ? parts.backbone() : std::make_shared<SECONDImpl>(o.backbone));
  neck_ =
      register_module("neck", parts.neck ? parts.neck() : std::make_shared<SECONDFPNImpl>(o.neck));
  bbox_head_ = register_module("bbox_head", parts.head ? parts.head()
                                                       : std::make_shared<Anchor3DHeadImpl>(
                                                             o.bbox_head, o.train_cfg, o.test_cfg));
}

at::Tensor VoxelNetImpl::extract_feat(const at::Tensor& voxels, const at::Tensor& num_points,
                                      const at::Tensor& coors, int64_t batch_size) {
  const at::Tensor pillars = voxel_encoder_->forward(voxels, num_points, coors);
  const at::Tensor canvas = middle_encoder_->forward(pillars, coors, batch_size);
  return neck_->forward(backbone_->forward(canvas));
}

LossMap VoxelNetImpl::forward_train(const at::Tensor& voxels, const at::Tensor& num_points,
                                    const at::Tensor& coors,
                                    const std::vector<at::Tensor>& gt_boxes,
                                    const std::vector<at::Tensor>& gt_labels) {
  TORCH_CHECK(!gt_boxes.empty(), "VoxelNet::forward_train: empty batch (no gt_boxes entries)");
  const at::Tensor features =
      extract_feat(voxels, num_points, coors, static_cast<int64_t>(gt_boxes.size()));
  return bbox_head_->loss(features, gt_boxes, gt_labels);
}

std::vector<Detections> VoxelNetImpl::predict(const at::Tensor& voxels,
                                              const at::Tensor& num_points, const at::Tensor& coors,
                                              int64_t batch_size) {
  const at::NoGradGuard no_grad;
  return bbox_head_->predict(extract_feat(voxels, num_points, coors, batch_size));
}

at::Tensor total_loss(const LossMap& losses) {
  TORCH_CHECK(!losses.empty(), "total_loss: no losses");
  at::Tensor sum;
  for (const auto& [name, value] : losses) sum = sum.defined() ? sum + value : value;
  return sum;
}

int64_t count_parameters(const torch::nn::Module& module) {
  int64_t n = 0;
  for (const auto& p : module.parameters()) n += p.numel();
  return n;
}

}  // namespace ddp3d::models
