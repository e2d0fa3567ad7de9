#include "worker/models/dense_heads/anchor3d_head.h"

#include <ATen/ATen.h>
#include <ATen/record_function.h>
#include <torch/nn/init.h>

#include <cmath>

#include "worker/models/task_modules/box_math.h"
#include "worker/models/task_modules/delta_xyzwlhr_bbox_coder.h"
#include "worker/ops/nms_rotated.h"

namespace ddp3d::models {
namespace {

constexpr int64_t kCode = DeltaXYZWLHRBBoxCoder::code_size;

torch::nn::Conv2d head_conv(int64_t in, int64_t out, double bias) {
  auto conv = torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, 1));
  // mmdet3d's init_cfg: Normal(std=0.01) for every conv, conv_cls bias from prior 0.01.
  torch::nn::init::normal_(conv->weight, 0.0, 0.01);
  torch::nn::init::constant_(conv->bias, bias);
  return conv;
}

// [B, A·K, H, W] → [B·H·W·A, K] in the anchors' (h, w, a) order.
at::Tensor flatten_map(const at::Tensor& map, int64_t k) {
  return map.permute({0, 2, 3, 1}).reshape({-1, k});
}

}  // namespace

std::pair<at::Tensor, at::Tensor> add_sin_difference(const at::Tensor& pred,
                                                     const at::Tensor& target) {
  const at::Tensor a = pred.narrow(-1, 6, 1);
  const at::Tensor b = target.narrow(-1, 6, 1);
  const int64_t rest = pred.size(-1) - 7;
  at::Tensor p =
      at::cat({pred.narrow(-1, 0, 6), at::sin(a) * at::cos(b), pred.narrow(-1, 7, rest)}, -1);
  at::Tensor t =
      at::cat({target.narrow(-1, 0, 6), at::cos(a) * at::sin(b), target.narrow(-1, 7, rest)}, -1);
  return {p, t};
}

Anchor3DHeadImpl::Anchor3DHeadImpl(const Anchor3DHeadOptions& options, const TrainCfg& train_cfg,
                                   const TestCfg& test_cfg)
    : options_(options),
      train_cfg_(train_cfg),
      test_cfg_(test_cfg),
      generator_(options.anchor_generator),
      loss_cls_(options.loss_cls),
      loss_bbox_(options.loss_bbox),
      loss_dir_(options.loss_dir) {
  for (const auto& a : train_cfg.assigner) assigners_.emplace_back(a);
  const int64_t a = generator_.num_base_anchors();
  const double prior = 0.01;
  conv_cls_ = register_module("conv_cls", head_conv(options.feat_channels, a * options.num_classes,
                                                    -std::log((1 - prior) / prior)));
  conv_reg_ = register_module("conv_reg", head_conv(options.feat_channels, a * kCode, 0.0));
  if (options.use_direction_classifier) {
    conv_dir_cls_ = register_module("conv_dir_cls", head_conv(options.feat_channels, a * 2, 0.0));
  }
}

HeadOutputs Anchor3DHeadImpl::forward(const at::Tensor& features) {
  HeadOutputs out;
  out.cls_score = conv_cls_->forward(features);
  out.bbox_pred = conv_reg_->forward(features);
  if (conv_dir_cls_) out.dir_cls_pred = conv_dir_cls_->forward(features);
  return out;
}

at::Tensor Anchor3DHeadImpl::anchors(int64_t height, int64_t width,
                                     const at::TensorOptions& options) const {
  return generator_.grid_anchors(height, width, options);
}

HeadTargets Anchor3DHeadImpl::targets(const at::Tensor& anchors,
                                      const std::vector<at::Tensor>& gt_boxes,
                                      const std::vector<at::Tensor>& gt_labels) const {
  // A named scope for profilers (LibTorch's, benchmarks/pointpillars' stage timer); it costs
  // one thread-local check unless a user-scope callback is registered.
  RECORD_USER_SCOPE("ddp3d::Anchor3DHead::targets");
  TORCH_CHECK(anchors.dim() == 5 && anchors.size(4) == kCode,
              "Anchor3DHead::targets: anchors must be [H, W, sizes, rotations, 7], got ",
              anchors.sizes());
  TORCH_CHECK(gt_boxes.size() == gt_labels.size(), "Anchor3DHead: ", gt_boxes.size(),
              " gt box sets but ", gt_labels.size(), " gt label sets");
  const int64_t num_classes = options_.num_classes;
  const int64_t sizes = anchors.size(2);
  const int64_t n = anchors.numel() / kCode;
  const at::Tensor flat = anchors.reshape({n, kCode});
  const auto fopt = anchors.options();
  const auto lopt = fopt.dtype(at::kLong);
  // Positions of each size's anchors in the flat (h, w, size, rotation) order.
  const at::Tensor position = at::arange(n, lopt).view({-1, sizes, anchors.size(3)});
  const bool per_size = assigners_.size() > 1;
  const double pos_label_weight = train_cfg_.pos_weight > 0 ? train_cfg_.pos_weight : 1.0;

  std::vector<at::Tensor> labels_b, label_w_b, bbox_t_b, bbox_w_b, dir_t_b, dir_w_b;
  int64_t num_total_pos = 0;
  for (size_t b = 0; b < gt_boxes.size(); ++b) {
    const at::Tensor& boxes = gt_boxes[b];
    const at::Tensor labels_in = gt_labels[b].to(at::kLong);
    TORCH_CHECK(boxes.dim() == 2 && (boxes.size(0) == 0 || boxes.size(1) >= kCode),
                "Anchor3DHead: gt_boxes[", b, "] must be [G, 7], got ", boxes.sizes());
    TORCH_CHECK(labels_in.dim() == 1 && labels_in.size(0) == boxes.size(0),
                "Anchor3DHead: gt_labels[", b, "] must be [", boxes.size(0), "], got ",
                labels_in.sizes());
    if (labels_in.numel() > 0) {
      TORCH_CHECK(
          labels_in.min().item<int64_t>() >= 0 && labels_in.max().item<int64_t>() < num_classes,
          "Anchor3DHead: gt_labels[", b, "] must lie in [0, ", num_classes, ")");
    }
    const at::Tensor gts =
        boxes.size(0) ? boxes.narrow(1, 0, kCode).to(fopt) : at::zeros({0, kCode}, fopt);
    const at::Tensor glabels = labels_in.to(lopt.device());

    at::Tensor labels = at::full({n}, num_classes, lopt);
    at::Tensor label_w = at::zeros({n}, fopt);
    at::Tensor bbox_t = at::zeros({n, kCode}, fopt);
    at::Tensor bbox_w = at::zeros({n, kCode}, fopt);
    at::Tensor dir_t = at::zeros({n}, lopt);
    at::Tensor dir_w = at::zeros({n}, fopt);
    int64_t num_pos = 0;

    const int64_t groups = per_size ? sizes : 1;
    for (int64_t k = 0; k < groups; ++k) {
      const at::Tensor idx = per_size ? position.select(1, k).reshape(-1) : at::arange(n, lopt);
      const at::Tensor group_anchors = flat.index_select(0, idx);
      at::Tensor group_gts = gts;
      at::Tensor group_labels = glabels;
      if (per_size && options_.assign_per_class) {
        const at::Tensor keep = (glabels == k).nonzero().squeeze(1);
        group_gts = gts.index_select(0, keep);
        group_labels = glabels.index_select(0, keep);
      }
      const Max3DIoUAssigner& assigner = assigners_[per_size ? static_cast<size_t>(k) : 0];
      const at::Tensor assigned = assigner.assign(group_anchors, group_gts).assigned_gt_inds;
      const at::Tensor pos = (assigned > 0).nonzero().squeeze(1);
      const at::Tensor neg = (assigned == 0).nonzero().squeeze(1);
      if (pos.numel() > 0) {
        const at::Tensor pos_idx = idx.index_select(0, pos);
        const at::Tensor matched = assigned.index_select(0, pos) - 1;
        const at::Tensor pos_anchors = group_anchors.index_select(0, pos);
        const at::Tensor reg =
            DeltaXYZWLHRBBoxCoder::encode(pos_anchors, group_gts.index_select(0, matched));
        bbox_t.index_copy_(0, pos_idx, reg);
        bbox_w.index_fill_(0, pos_idx, 1.0);
        dir_t.index_copy_(
            0, pos_idx,
            direction_target(pos_anchors, reg, options_.dir_offset, options_.dir_limit_offset));
        dir_w.index_fill_(0, pos_idx, 1.0);
        labels.index_copy_(0, pos_idx, group_labels.index_select(0, matched));
        label_w.index_fill_(0, pos_idx, pos_label_weight);
        num_pos += pos.numel();
      }
      if (neg.numel() > 0) label_w.index_fill_(0, idx.index_select(0, neg), 1.0);
    }
    num_total_pos += std::max<int64_t>(num_pos, 1);
    labels_b.push_back(labels);
    label_w_b.push_back(label_w);
    bbox_t_b.push_back(bbox_t);
    bbox_w_b.push_back(bbox_w);
    dir_t_b.push_back(dir_t);
    dir_w_b.push_back(dir_w);
  }
  return {at::stack(labels_b), at::stack(label_w_b), at::stack(bbox_t_b), at::stack(bbox_w_b),
          at::stack(dir_t_b),  at::stack(dir_w_b),   num_total_pos};
}

LossMap Anchor3DHeadImpl::loss(const HeadOutputs& outputs, const std::vector<at::Tensor>& gt_boxes,
                               const std::vector<at::Tensor>& gt_labels) const {
  const at::Tensor& cls = outputs.cls_score;
  TORCH_CHECK(cls.dim() == 4, "Anchor3DHead::loss: cls_score must be [B, C, H, W]");
  TORCH_CHECK(static_cast<int64_t>(gt_boxes.size()) == cls.size(0), "Anchor3DHead::loss: batch of ",
              cls.size(0), " but ", gt_boxes.size(), " gt box sets");
  const int64_t c = options_.num_classes;
  const at::Tensor anchors_grid = anchors(cls.size(2), cls.size(3), cls.options());
  const HeadTargets t = targets(anchors_grid, gt_boxes, gt_labels);
  const auto avg = static_cast<double>(t.num_total_pos);

  const at::Tensor labels = t.labels.reshape(-1);
  LossMap losses;
  losses["loss_cls"] = loss_cls_(flatten_map(cls, c), labels, t.label_weights.reshape(-1), avg);

  const at::Tensor pos = ((labels >= 0) & (labels < c)).nonzero().squeeze(1);
  const at::Tensor pos_pred = flatten_map(outputs.bbox_pred, kCode).index_select(0, pos);
  at::Tensor pos_dir_pred;
  if (outputs.dir_cls_pred.defined()) {
    pos_dir_pred = flatten_map(outputs.dir_cls_pred, 2).index_select(0, pos);
  }
  if (pos.numel() > 0) {
    at::Tensor pred = pos_pred;
    at::Tensor target = t.bbox_targets.reshape({-1, kCode}).index_select(0, pos);
    at::Tensor weight = t.bbox_weights.reshape({-1, kCode}).index_select(0, pos);
    if (!train_cfg_.code_weight.empty()) {
      weight = weight * at::tensor(train_cfg_.code_weight, weight.options());
    }
    if (options_.diff_rad_by_sin) std::tie(pred, target) = add_sin_difference(pred, target);
    losses["loss_bbox"] = loss_bbox_(pred, target, weight, avg);
    if (pos_dir_pred.defined()) {
      losses["loss_dir"] = loss_dir_(pos_dir_pred, t.dir_targets.reshape(-1).index_select(0, pos),
                                     t.dir_weights.reshape(-1).index_select(0, pos), avg);
    }
  } else {
    // No positives anywhere: zero losses that still reach the parameters (DDP needs every
    // parameter in the graph on every rank).
    losses["loss_bbox"] = pos_pred.sum();
    if (pos_dir_pred.defined()) losses["loss_dir"] = pos_dir_pred.sum();
  }
  return losses;
}

LossMap Anchor3DHeadImpl::loss(const at::Tensor& features, const std::vector<at::Tensor>& gt_boxes,
                               const std::vector<at::Tensor>& gt_labels) {
  return loss(forward(features), gt_boxes, gt_labels);
}

std::vector<Detections> Anchor3DHeadImpl::predict(const at::Tensor& features) {
  return predict(forward(features));
}

std::vector<Detections> Anchor3DHeadImpl::predict(const HeadOutputs& outputs) const {
  const at::Tensor& cls = outputs.cls_score;
  const at::Tensor flat_anchors =
      anchors(cls.size(2), cls.size(3), cls.options()).reshape({-1, kCode});
  std::vector<Detections> result;
  for (int64_t b = 0; b < cls.size(0); ++b) {
    result.push_back(predict_single(
        cls[b], outputs.bbox_pred[b],
        outputs.dir_cls_pred.defined() ? outputs.dir_cls_pred[b] : at::Tensor(), flat_anchors));
  }
  return result;
}

Detections Anchor3DHeadImpl::predict_single(const at::Tensor& cls, const at::Tensor& bbox,
                                            const at::Tensor& dir,
                                            const at::Tensor& flat_anchors) const {
  const int64_t c = options_.num_classes;
  at::Tensor scores = cls.permute({1, 2, 0}).reshape({-1, c}).sigmoid();
  at::Tensor deltas = bbox.permute({1, 2, 0}).reshape({-1, kCode});
  at::Tensor dir_bins = dir.defined()
                            ? dir.permute({1, 2, 0}).reshape({-1, 2}).argmax(-1)
                            : at::zeros({scores.size(0)}, scores.options().dtype(at::kLong));
  at::Tensor anchors_sel = flat_anchors;
  if (test_cfg_.nms_pre > 0 && scores.size(0) > test_cfg_.nms_pre) {
    const at::Tensor top = std::get<1>(std::get<0>(scores.max(1)).topk(test_cfg_.nms_pre));
    anchors_sel = anchors_sel.index_select(0, top);
    deltas = deltas.index_select(0, top);
    scores = scores.index_select(0, top);
    dir_bins = dir_bins.index_select(0, top);
  }
  const at::Tensor boxes = DeltaXYZWLHRBBoxCoder::decode(anchors_sel, deltas);
  // BEV (x, y, dx, dy, yaw) for the rotated NMS.
  const at::Tensor bev =
      boxes.index_select(1, at::tensor({0, 1, 3, 4, 6}, boxes.options().dtype(at::kLong)));

  std::vector<at::Tensor> out_boxes, out_scores, out_labels, out_dirs;
  for (int64_t k = 0; k < c; ++k) {
    const at::Tensor sel = (scores.select(1, k) > test_cfg_.score_thr).nonzero().squeeze(1);
    if (sel.numel() == 0) continue;
    const at::Tensor class_scores = scores.select(1, k).index_select(0, sel);
    const at::Tensor keep =
        ops::nms_rotated_bev(bev.index_select(0, sel), class_scores, test_cfg_.nms_thr);
    const at::Tensor kept = sel.index_select(0, keep);
    out_boxes.push_back(boxes.index_select(0, kept));
    out_scores.push_back(class_scores.index_select(0, keep));
    out_labels.push_back(at::full({kept.numel()}, k, kept.options()));
    out_dirs.push_back(dir_bins.index_select(0, kept));
  }
  Detections det;
  if (out_boxes.empty()) {
    det.boxes = at::zeros({0, kCode}, boxes.options());
    det.scores = at::zeros({0}, scores.options());
    det.labels = at::zeros({0}, scores.options().dtype(at::kLong));
    return det;
  }
  at::Tensor all_boxes = at::cat(out_boxes);
  at::Tensor all_scores = at::cat(out_scores);
  at::Tensor all_labels = at::cat(out_labels);
  at::Tensor all_dirs = at::cat(out_dirs);
  if (all_scores.size(0) > test_cfg_.max_num) {
    const at::Tensor order = std::get<1>(all_scores.sort(/*stable=*/true, 0, /*descending=*/true))
                                 .narrow(0, 0, test_cfg_.max_num);
    all_boxes = all_boxes.index_select(0, order);
    all_scores = all_scores.index_select(0, order);
    all_labels = all_labels.index_select(0, order);
    all_dirs = all_dirs.index_select(0, order);
  }
  if (dir.defined()) {
    // The regression only knows the yaw modulo π; the direction bin picks the half-turn.
    const at::Tensor rot =
        limit_period(all_boxes.select(1, 6) - options_.dir_offset, options_.dir_limit_offset, M_PI);
    all_boxes = all_boxes.clone();
    all_boxes.select(1, 6).copy_(rot + options_.dir_offset + M_PI * all_dirs.to(all_boxes.dtype()));
  }
  det.boxes = all_boxes;
  det.scores = all_scores;
  det.labels = all_labels;
  return det;
}

}  // namespace ddp3d::models
