// Plain option structs for CenterPoint on pillars (mmdet3d's CenterHead with one task and its
// CenterPointBBoxCoder). Field names follow mmdet3d's config keys where they exist; the
// geometry mmdet3d repeats in bbox_coder, train_cfg and test_cfg is given once, in bbox_coder,
// and defaults to the voxel layer's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "worker/models/pointpillars/options.h"

namespace ddp3d::models {

// mmdet.GaussianFocalLoss (CornerNet's focal loss on Gaussian targets).
struct GaussianFocalLossOptions {
  double alpha = 2.0;  // the power of (1 - p) on peaks and of p elsewhere
  double gamma = 4.0;  // the power of (1 - target) that spares the cells near a peak
  double loss_weight = 1.0;
};

// mmdet.L1Loss
struct L1LossOptions {
  double loss_weight = 0.25;
};

// model.bbox_head.bbox_coder (type='CenterPointBBoxCoder')
struct CenterPointBBoxCoderOptions {
  std::vector<double> pc_range;           // [x_min, y_min]; empty: the voxel layer's
  std::vector<double> voxel_size;         // [x, y]; empty: the voxel layer's
  int64_t out_size_factor = 2;            // BEV grid cells per heatmap cell
  std::vector<double> post_center_range;  // 6 numbers, or empty: no limit
  int64_t max_num = 500;                  // peaks decoded per sample
  double score_threshold = 0.1;
};

// model.bbox_head.separate_head (type='SeparateHead')
struct SeparateHeadOptions {
  int64_t final_kernel = 3;  // odd: the convs keep the map's size
  double init_bias = -2.19;  // the heatmap's initial logit (p ≈ 0.1)
};

// model.bbox_head (type='CenterHead'): a shared 3×3 conv, then one separate head per output
// (reg 2, height 1, dim 3, rot 2, heatmap num_classes), each a conv with BN and ReLU and a
// final conv.
struct CenterHeadOptions {
  int64_t num_classes = 1;
  int64_t in_channels = 384;
  int64_t share_conv_channel = 64;
  int64_t head_conv = 64;
  SeparateHeadOptions separate_head{};
  NormCfg norm_cfg{NormType::kBatchNorm, 1e-5, 0.1};
  CenterPointBBoxCoderOptions bbox_coder{};
  GaussianFocalLossOptions loss_cls{};
  L1LossOptions loss_bbox{};
};

// model.train_cfg of a CenterPoint model: how boxes become heatmap peaks and regression targets.
struct CenterPointTrainCfg {
  double gaussian_overlap = 0.1;
  int64_t min_radius = 2;
  int64_t max_objs = 500;
  // per regression channel: reg x, y, height, dim x, y, z, rot sin, cos
  std::vector<double> code_weights{1, 1, 1, 1, 1, 1, 1, 1};
};

// model.test_cfg of a CenterPoint model: the NMS after decoding (mmdet3d's nms_type 'rotate').
struct CenterPointTestCfg {
  double nms_thr = 0.2;
  int64_t pre_max_size = 1000;
  int64_t post_max_size = 83;
};

}  // namespace ddp3d::models
