#include "worker/models/dense_heads/center_head.h"

#include <ATen/ATen.h>
#include <ATen/record_function.h>
#include <torch/nn/init.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/conv.h>

#include <algorithm>
#include <string>

#include "worker/models/layers/norm_layer.h"
#include "worker/models/losses/weighted_reduce.h"
#include "worker/ops/nms_rotated.h"

namespace ddp3d::models {
namespace {

constexpr int64_t kCode = 8;  // reg 2, height 1, dim 3, rot 2

// mmdet3d's init_cfg for these convs: Kaiming (fan_out, relu, normal), zero bias.
torch::nn::Conv2d kaiming_conv(int64_t in, int64_t out, int64_t kernel, bool bias) {
  auto conv =
      torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, kernel).padding(kernel / 2).bias(bias));
  torch::nn::init::kaiming_normal_(conv->weight, 0.0, torch::kFanOut, torch::kReLU);
  if (bias) torch::nn::init::zeros_(conv->bias);
  return conv;
}

// conv + BatchNorm2d + ReLU (mmcv's ConvModule with a norm: the conv has no bias).
torch::nn::Sequential conv_module(int64_t in, int64_t out, int64_t kernel, const NormCfg& norm) {
  torch::nn::Sequential block;
  block->push_back(kaiming_conv(in, out, kernel, false));
  block->push_back(build_norm_layer(norm, out, 2));
  block->push_back(torch::nn::ReLU());
  return block;
}

// One of SeparateHead's outputs: a ConvModule and the final conv (mmdet3d's num_conv = 2).
torch::nn::Sequential separate_head(const CenterHeadOptions& o, int64_t out, double bias) {
  const int64_t k = o.separate_head.final_kernel;
  torch::nn::Sequential head = conv_module(o.share_conv_channel, o.head_conv, k, o.norm_cfg);
  auto last = kaiming_conv(o.head_conv, out, k, true);
  torch::nn::init::constant_(last->bias, bias);
  head->push_back(last);
  return head;
}

CenterPointCoderOptions make_coder_options(const CenterHeadOptions& o,
                                           const CenterPointTrainCfg& t) {
  CenterPointCoderOptions c;
  c.pc_range_min = {o.bbox_coder.pc_range.at(0), o.bbox_coder.pc_range.at(1)};
  c.voxel_size = {o.bbox_coder.voxel_size.at(0), o.bbox_coder.voxel_size.at(1)};
  c.out_size_factor = o.bbox_coder.out_size_factor;
  c.gaussian_overlap = t.gaussian_overlap;
  c.min_radius = t.min_radius;
  c.max_objs = t.max_objs;
  c.max_num = o.bbox_coder.max_num;
  c.score_threshold = o.bbox_coder.score_threshold;
  c.post_center_range = o.bbox_coder.post_center_range;
  return c;
}

}  // namespace

CenterHeadImpl::CenterHeadImpl(const CenterHeadOptions& options,
                               const CenterPointTrainCfg& train_cfg,
                               const CenterPointTestCfg& test_cfg, std::array<int64_t, 2> grid)
    : options_(options),
      test_cfg_(test_cfg),
      coder_(make_coder_options(options, train_cfg)),
      code_weights_(train_cfg.code_weights),
      grid_(grid),
      loss_cls_(options.loss_cls) {
  TORCH_CHECK(code_weights_.size() == kCode, "CenterHead: model.train_cfg.code_weights needs ",
              kCode, " values, got ", code_weights_.size());
  TORCH_CHECK(options.separate_head.final_kernel % 2 == 1,
              "CenterHead: model.bbox_head.separate_head.final_kernel must be odd");
  shared_conv_ = register_module(
      "shared_conv",
      conv_module(options.in_channels, options.share_conv_channel, 3, options.norm_cfg));
  reg_ = register_module("reg", separate_head(options, 2, 0.0));
  height_ = register_module("height", separate_head(options, 1, 0.0));
  dim_ = register_module("dim", separate_head(options, 3, 0.0));
  rot_ = register_module("rot", separate_head(options, 2, 0.0));
  heatmap_ = register_module(
      "heatmap", separate_head(options, options.num_classes, options.separate_head.init_bias));
}

void CenterHeadImpl::check_map(const at::Tensor& heatmap) const {
  if (grid_[0] <= 0) return;
  const int64_t f = coder_.out_size_factor;
  TORCH_CHECK(heatmap.size(2) * f == grid_[0] && heatmap.size(3) * f == grid_[1],
              "CenterHead: the neck's map is ", heatmap.size(2), " x ", heatmap.size(3),
              " cells, but model.bbox_head.bbox_coder.out_size_factor ", f, " expects the grid [",
              grid_[0], ", ", grid_[1], "] / ", f);
}

CenterHeadOutputs CenterHeadImpl::forward(const at::Tensor& features) {
  const at::Tensor x = shared_conv_->forward(features);
  CenterHeadOutputs out;
  out.reg = reg_->forward(x);
  out.height = height_->forward(x);
  out.dim = dim_->forward(x);
  out.rot = rot_->forward(x);
  out.heatmap = heatmap_->forward(x);
  return out;
}

LossMap CenterHeadImpl::loss(const CenterHeadOutputs& outputs,
                             const std::vector<at::Tensor>& gt_boxes,
                             const std::vector<at::Tensor>& gt_labels) const {
  RECORD_USER_SCOPE("ddp3d::CenterHead::loss");
  const at::Tensor& logits = outputs.heatmap;
  check_map(logits);
  const int64_t batch = logits.size(0);
  TORCH_CHECK(static_cast<int64_t>(gt_boxes.size()) == batch && gt_labels.size() == gt_boxes.size(),
              "CenterHead::loss: ", batch, " samples but ", gt_boxes.size(), " box lists and ",
              gt_labels.size(), " label lists");
  std::vector<at::Tensor> heatmaps, boxes, inds, masks;
  for (int64_t b = 0; b < batch; ++b) {
    CenterPointTargets t = center_point_targets(gt_boxes[b], gt_labels[b], options_.num_classes,
                                                logits.size(2), logits.size(3), coder_);
    heatmaps.push_back(t.heatmap);
    boxes.push_back(t.boxes);
    inds.push_back(t.inds);
    masks.push_back(t.mask);
  }
  const auto on = logits.options();
  const at::Tensor heatmap = at::stack(heatmaps).to(on);
  at::Tensor target = at::stack(boxes).to(on);                     // [B, M, 8]
  const at::Tensor ind = at::stack(inds).to(on.dtype(at::kLong));  // [B, M]
  const at::Tensor mask = at::stack(masks).to(on);                 // [B, M]

  // mmdet3d's clip_sigmoid: probabilities kept off 0 and 1 for the logs.
  const at::Tensor prob = logits.sigmoid().clamp(1e-4, 1 - 1e-4);
  const double num_pos = heatmap.eq(1).sum().item<double>();
  LossMap losses;
  losses["loss_heatmap"] = loss_cls_(prob, heatmap, std::max(num_pos, 1.0));

  // The predicted codes at each box's peak cell: [B, 8, H, W] → [B, H·W, 8] → [B, M, 8].
  const at::Tensor pred_map = at::cat({outputs.reg, outputs.height, outputs.dim, outputs.rot}, 1);
  const at::Tensor flat = pred_map.flatten(2).transpose(1, 2);
  const at::Tensor pred = flat.gather(1, ind.unsqueeze(2).expand({-1, -1, kCode}));
  const at::Tensor finite = target.isfinite().to(on.dtype());
  target = at::where(finite.to(at::kBool), target, at::zeros_like(target));
  const at::Tensor weights =
      mask.unsqueeze(2) * finite * at::tensor(code_weights_, on.dtype(at::kDouble)).to(on);
  const double num_boxes = mask.sum().item<double>();
  losses["loss_bbox"] = options_.loss_bbox.loss_weight *
                        weighted_sum_over((pred - target).abs(), weights, num_boxes + 1e-4);
  return losses;
}

std::vector<Detections> CenterHeadImpl::predict(const CenterHeadOutputs& outputs) const {
  check_map(outputs.heatmap);
  CenterPointMaps maps;
  maps.heatmap = outputs.heatmap.sigmoid();
  maps.reg = outputs.reg;
  maps.height = outputs.height;
  maps.dim = outputs.dim.exp();
  maps.rot_sin = outputs.rot.narrow(1, 0, 1);
  maps.rot_cos = outputs.rot.narrow(1, 1, 1);
  std::vector<Detections> decoded = center_point_decode(maps, coder_);
  const auto bev_columns = at::tensor({0, 1, 3, 4, 6}, at::kLong);
  for (Detections& d : decoded) {
    // Sorted by score already: the first pre_max_size are NMS's candidates.
    const int64_t n = std::min(d.scores.size(0), test_cfg_.pre_max_size);
    const at::Tensor boxes = d.boxes.narrow(0, 0, n);
    const at::Tensor scores = d.scores.narrow(0, 0, n);
    at::Tensor keep = ops::nms_rotated_bev(boxes.index_select(1, bev_columns.to(boxes.device())),
                                           scores, test_cfg_.nms_thr);
    keep = keep.narrow(0, 0, std::min(keep.size(0), test_cfg_.post_max_size));
    d.boxes = boxes.index_select(0, keep);
    d.scores = scores.index_select(0, keep);
    d.labels = d.labels.narrow(0, 0, n).index_select(0, keep);
  }
  return decoded;
}

LossMap CenterHeadImpl::loss(const at::Tensor& features, const std::vector<at::Tensor>& gt_boxes,
                             const std::vector<at::Tensor>& gt_labels) {
  return loss(forward(features), gt_boxes, gt_labels);
}

std::vector<Detections> CenterHeadImpl::predict(const at::Tensor& features) {
  return predict(forward(features));
}

}  // namespace ddp3d::models
