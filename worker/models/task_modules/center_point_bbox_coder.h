// CenterPoint's box coding on a BEV feature map (mmdet3d's CenterHead.get_targets_single and
// CenterPointBBoxCoder.decode): a box is a Gaussian peak on its class's heatmap at its centre
// cell, plus, at that cell, the sub-cell offset, the centre height, log sizes and sin/cos of
// its yaw. Boxes are LiDAR boxes (x, y, z_bottom, dx, dy, dz, yaw) outside; the height coded is
// the box centre's, as mmdet3d codes the gravity centre.
#pragma once

#include <ATen/core/Tensor.h>

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "worker/models/dense_heads/dense_head.h"

namespace ddp3d::models {

struct CenterPointCoderOptions {
  std::array<double, 2> pc_range_min{0.0, -39.68};  // point_cloud_range's x_min, y_min
  std::array<double, 2> voxel_size{0.16, 0.16};
  int64_t out_size_factor = 2;  // voxels per heatmap cell
  // train_cfg: the Gaussian's overlap and smallest radius, the most objects per sample.
  double gaussian_overlap = 0.1;
  int64_t min_radius = 2;
  int64_t max_objs = 500;
  // test_cfg: boxes kept per sample before NMS, the lowest score, and the range box centres
  // must lie in ([x_min, y_min, z_min, x_max, y_max, z_max]; empty: any).
  int64_t max_num = 100;
  double score_threshold = 0.1;
  std::vector<double> post_center_range;
};

// One sample's training targets for a heatmap of num_classes × height × width cells.
struct CenterPointTargets {
  at::Tensor heatmap;  // [num_classes, H, W] float
  at::Tensor boxes;  // [max_objs, 8]: dx_cell, dy_cell, z_centre, log dx, log dy, log dz, sin, cos
  at::Tensor inds;   // [max_objs] int64: y · W + x of each box's centre cell
  at::Tensor mask;   // [max_objs] uint8: 1 for a box written, 0 for padding
};

// gt_boxes [G, 7] LiDAR boxes, gt_labels [G] int64 in [0, num_classes). Boxes whose centre
// falls outside the map, or with a non-positive size, are left out; so are those beyond
// max_objs.
CenterPointTargets center_point_targets(const at::Tensor& gt_boxes, const at::Tensor& gt_labels,
                                        int64_t num_classes, int64_t height, int64_t width,
                                        const CenterPointCoderOptions& options);

// The head's maps for a batch, as CenterHead's separate heads produce them and after its
// activations: heatmap scores [B, C, H, W] in [0, 1] (sigmoid), reg [B, 2, H, W] sub-cell
// offsets, height [B, 1, H, W] centre z, dim [B, 3, H, W] sizes (exp of the log sizes),
// rot_sin and rot_cos [B, 1, H, W].
struct CenterPointMaps {
  at::Tensor heatmap;
  at::Tensor reg;
  at::Tensor height;
  at::Tensor dim;
  at::Tensor rot_sin;
  at::Tensor rot_cos;
};

// Per sample: the max_num highest peaks over every class (no peak picking beyond top-k, as
// mmdet3d's coder; NMS is the head's), decoded to LiDAR boxes with the bottom z, and filtered
// by score_threshold and post_center_range. Sorted by score, highest first.
std::vector<Detections> center_point_decode(const CenterPointMaps& maps,
                                            const CenterPointCoderOptions& options);

}  // namespace ddp3d::models
