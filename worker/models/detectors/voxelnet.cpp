#include "worker/models/detectors/voxelnet.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <stdexcept>

#include "worker/models/backbones/second.h"

namespace ddp3d::models {

VoxelNetImpl::VoxelNetImpl(PointPillarsOptions options, const BackboneFactory& backbone)
    : options_(std::move(options)) {
  validate(options_);
  if (!backbone && options_.backbone_type != "SECOND") {
    throw std::invalid_argument("invalid model option model.backbone.type: " +
                                options_.backbone_type + " needs a backbone factory");
  }
  voxel_encoder_ = register_module("voxel_encoder", PillarFeatureNet(options_.voxel_encoder));
  middle_encoder_ = register_module("middle_encoder", PointPillarsScatter(options_.middle_encoder));
  backbone_ = register_module(
      "backbone", backbone ? backbone() : std::make_shared<SECONDImpl>(options_.backbone));
  neck_ = register_module("neck", SECONDFPN(options_.neck));
  bbox_head_ = register_module(
      "bbox_head", Anchor3DHead(options_.bbox_head, options_.train_cfg, options_.test_cfg));
}

HeadOutputs VoxelNetImpl::forward(const at::Tensor& voxels, const at::Tensor& num_points,
                                  const at::Tensor& coors, int64_t batch_size) {
  const at::Tensor pillars = voxel_encoder_->forward(voxels, num_points, coors);
  const at::Tensor canvas = middle_encoder_->forward(pillars, coors, batch_size);
  return bbox_head_->forward(neck_->forward(backbone_->forward(canvas)));
}

LossMap VoxelNetImpl::forward_train(const at::Tensor& voxels, const at::Tensor& num_points,
                                    const at::Tensor& coors,
                                    const std::vector<at::Tensor>& gt_boxes,
                                    const std::vector<at::Tensor>& gt_labels) {
  TORCH_CHECK(!gt_boxes.empty(), "VoxelNet::forward_train: empty batch (no gt_boxes entries)");
  const HeadOutputs out = forward(voxels, num_points, coors, static_cast<int64_t>(gt_boxes.size()));
  return bbox_head_->loss(out, gt_boxes, gt_labels);
}

std::vector<Detections> VoxelNetImpl::predict(const at::Tensor& voxels,
                                              const at::Tensor& num_points, const at::Tensor& coors,
                                              int64_t batch_size) {
  const at::NoGradGuard no_grad;
  return bbox_head_->predict(forward(voxels, num_points, coors, batch_size));
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
