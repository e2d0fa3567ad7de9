// CenterHead (mmdet3d, one task): a shared 3×3 conv over the neck's BEV map, then separate heads
// for the class heatmaps and, at each cell, the box's sub-cell offset, centre height, log sizes
// and sin/cos of its yaw. Training draws each box as a Gaussian peak (GaussianFocalLoss) and
// regresses the box at its peak cell (L1); inference picks the top peaks, decodes them
// (task_modules/center_point_bbox_coder.h) and keeps the best of overlapping boxes by rotated
// BEV NMS.
#pragma once

#include <torch/nn/modules/container/sequential.h>

#include <array>
#include <cstdint>
#include <vector>

#include "worker/models/centerpoint/options.h"
#include "worker/models/dense_heads/dense_head.h"
#include "worker/models/losses/gaussian_focal_loss.h"
#include "worker/models/task_modules/center_point_bbox_coder.h"

namespace ddp3d::models {

// The raw maps (before activations) of a batch.
struct CenterHeadOutputs {
  at::Tensor heatmap;  // [B, num_classes, H, W] logits
  at::Tensor reg;      // [B, 2, H, W]
  at::Tensor height;   // [B, 1, H, W]
  at::Tensor dim;      // [B, 3, H, W] log sizes
  at::Tensor rot;      // [B, 2, H, W] sin, cos
};

class CenterHeadImpl : public DenseHeadImpl {
 public:
  // grid: the BEV grid [ny, nx] the head's map is out_size_factor times coarser than ({0, 0}:
  // not checked).
  CenterHeadImpl(const CenterHeadOptions& options, const CenterPointTrainCfg& train_cfg,
                 const CenterPointTestCfg& test_cfg, std::array<int64_t, 2> grid = {0, 0});

  CenterHeadOutputs forward(const at::Tensor& features);

  // {"loss_heatmap", "loss_bbox"}: the focal loss over max(#peaks, 1) and the L1 loss of the
  // coded boxes at their peaks over the number of boxes.
  LossMap loss(const CenterHeadOutputs& outputs, const std::vector<at::Tensor>& gt_boxes,
               const std::vector<at::Tensor>& gt_labels) const;
  // Decoded peaks, then rotated NMS (pre_max_size, nms_thr, post_max_size), per sample.
  std::vector<Detections> predict(const CenterHeadOutputs& outputs) const;

  LossMap loss(const at::Tensor& features, const std::vector<at::Tensor>& gt_boxes,
               const std::vector<at::Tensor>& gt_labels) override;
  std::vector<Detections> predict(const at::Tensor& features) override;

  const CenterPointCoderOptions& coder_options() const { return coder_; }

 private:
  void check_map(const at::Tensor& heatmap) const;

  CenterHeadOptions options_;
  CenterPointTestCfg test_cfg_;
  CenterPointCoderOptions coder_;
  std::vector<double> code_weights_;
  std::array<int64_t, 2> grid_;
  GaussianFocalLoss loss_cls_;
  torch::nn::Sequential shared_conv_{nullptr};
  torch::nn::Sequential reg_{nullptr};
  torch::nn::Sequential height_{nullptr};
  torch::nn::Sequential dim_{nullptr};
  torch::nn::Sequential rot_{nullptr};
  torch::nn::Sequential heatmap_{nullptr};
};
TORCH_MODULE(CenterHead);

}  // namespace ddp3d::models
