// The training pipeline's point-cloud transforms (mmdet3d's names), each on a sample's lidar
// points [N, C] and boxes [K, 7] (x, y, z, l, w, h, yaw) with labels [K]. Random transforms
// take the generator explicitly, so a (seed, epoch, index) triple reproduces a sample.
#pragma once

#include <ATen/core/Tensor.h>

#include <array>
#include <random>

namespace ddp3d::data {

struct DetectionSample {
  at::Tensor points;     // [N, C] float
  at::Tensor gt_boxes;   // [K, 7] float
  at::Tensor gt_labels;  // [K] int64; -1 = not a training class
};

// PointsRangeFilter: keeps points inside the 3D range (x0 y0 z0 x1 y1 z1).
void points_range_filter(DetectionSample& s, const std::array<double, 6>& range);
// ObjectRangeFilter: keeps boxes whose BEV centre is inside the range, wraps yaw to [-pi, pi).
void object_range_filter(DetectionSample& s, const std::array<double, 6>& range);
// ObjectNameFilter: drops boxes with label -1.
void object_name_filter(DetectionSample& s);
// GlobalRotScaleTrans: rotation about z by U(rot), scaling by U(scale), translation N(0, std).
void global_rot_scale_trans(DetectionSample& s, std::array<double, 2> rot_range,
                            std::array<double, 2> scale_range, double translation_std,
                            std::mt19937_64& rng);
// RandomFlip3D (BEV, horizontal): with probability p mirrors y -> -y, yaw -> -yaw.
void random_flip_bev(DetectionSample& s, double probability, std::mt19937_64& rng);
// PointShuffle.
void point_shuffle(DetectionSample& s, std::mt19937_64& rng);

// Applies a rotation/scale/translation deterministically (the random ones call these).
void rotate_scale_translate(DetectionSample& s, double angle, double scale,
                            const std::array<double, 3>& translation);
void flip_bev(DetectionSample& s);

}  // namespace ddp3d::data
