// Anchor3DHead (mmdet3d): 1×1 convs predicting, for every anchor of every BEV cell, the class
// logits, the 7 box deltas and the 2 direction-bin logits; the training targets (anchor
// assignment per class), the losses, and inference (decode, top-k, rotated NMS).
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/conv.h>

#include <string>
#include <vector>

#include "worker/models/dense_heads/dense_head.h"
#include "worker/models/losses/cross_entropy_loss.h"
#include "worker/models/losses/focal_loss.h"
#include "worker/models/losses/smooth_l1_loss.h"
#include "worker/models/pointpillars/options.h"
#include "worker/models/task_modules/anchor_3d_range_generator.h"
#include "worker/models/task_modules/max_3d_iou_assigner.h"

namespace ddp3d::models {

struct HeadOutputs {
  at::Tensor cls_score;     // [B, A·num_classes, H, W]
  at::Tensor bbox_pred;     // [B, A·7, H, W]
  at::Tensor dir_cls_pred;  // [B, A·2, H, W] (undefined without the direction classifier)
};

// Per-anchor training targets for a batch; anchors flattened as (h, w, size, rotation).
struct HeadTargets {
  at::Tensor labels;          // [B, N] int64, num_classes = background
  at::Tensor label_weights;   // [B, N]
  at::Tensor bbox_targets;    // [B, N, 7]
  at::Tensor bbox_weights;    // [B, N, 7]
  at::Tensor dir_targets;     // [B, N] int64
  at::Tensor dir_weights;     // [B, N]
  int64_t num_total_pos = 0;  // Σ over samples of max(#positives, 1): the loss normaliser
};

class Anchor3DHeadImpl : public DenseHeadImpl {
 public:
  Anchor3DHeadImpl(const Anchor3DHeadOptions& options, const TrainCfg& train_cfg,
                   const TestCfg& test_cfg);

  HeadOutputs forward(const at::Tensor& features);

  // [H, W, sizes, rotations, 7] anchors for an H × W map.
  at::Tensor anchors(int64_t height, int64_t width, const at::TensorOptions& options) const;

  // gt_boxes[b] [G_b, 7], gt_labels[b] [G_b] int64 in [0, num_classes).
  HeadTargets targets(const at::Tensor& anchors, const std::vector<at::Tensor>& gt_boxes,
                      const std::vector<at::Tensor>& gt_labels) const;

  // {"loss_cls", "loss_bbox", "loss_dir"}, each normalised by HeadTargets::num_total_pos.
  LossMap loss(const HeadOutputs& outputs, const std::vector<at::Tensor>& gt_boxes,
               const std::vector<at::Tensor>& gt_labels) const;

  // Per-sample detections after decode, nms_pre top-k, score threshold, per-class rotated
  // NMS, max_num and the direction-bin yaw correction (test_cfg).
  std::vector<Detections> predict(const HeadOutputs& outputs) const;

  // DenseHeadImpl: the same, from the neck's features.
  LossMap loss(const at::Tensor& features, const std::vector<at::Tensor>& gt_boxes,
               const std::vector<at::Tensor>& gt_labels) override;
  std::vector<Detections> predict(const at::Tensor& features) override;

  int64_t num_anchors_per_location() const { return generator_.num_base_anchors(); }
  const Anchor3DHeadOptions& options() const { return options_; }

 private:
  Detections predict_single(const at::Tensor& cls, const at::Tensor& bbox, const at::Tensor& dir,
                            const at::Tensor& flat_anchors) const;

  Anchor3DHeadOptions options_;
  TrainCfg train_cfg_;
  TestCfg test_cfg_;
  Anchor3DRangeGenerator generator_;
  std::vector<Max3DIoUAssigner> assigners_;
  FocalLoss loss_cls_;
  SmoothL1Loss loss_bbox_;
  CrossEntropyLoss loss_dir_;
  torch::nn::Conv2d conv_cls_{nullptr};
  torch::nn::Conv2d conv_reg_{nullptr};
  torch::nn::Conv2d conv_dir_cls_{nullptr};
};
TORCH_MODULE(Anchor3DHead);

// mmdet3d's add_sin_difference: replaces the yaw column of prediction and target by
// sin(a)·cos(b) and cos(a)·sin(b), whose difference is sin(a - b).
std::pair<at::Tensor, at::Tensor> add_sin_difference(const at::Tensor& pred,
                                                     const at::Tensor& target);

}  // namespace ddp3d::models
