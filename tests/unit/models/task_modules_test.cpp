// Anchor generator, box coder, direction targets and the IoU assigner on small tensors.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>

#include "worker/models/pointpillars/options.h"
#include "worker/models/task_modules/anchor_3d_range_generator.h"
#include "worker/models/task_modules/box_math.h"
#include "worker/models/task_modules/delta_xyzwlhr_bbox_coder.h"
#include "worker/models/task_modules/max_3d_iou_assigner.h"

namespace ddp3d::models {
namespace {

const auto kF64 = at::TensorOptions().dtype(at::kDouble);

at::Tensor row(std::initializer_list<double> v) {
  return at::tensor(std::vector<double>(v), kF64);
}

void expect_box(const at::Tensor& got, std::initializer_list<double> want, double tol = 1e-6) {
  EXPECT_TRUE(at::allclose(got, row(want), 0, tol)) << "got " << got << " want " << row(want);
}

TEST(AnchorGenerator, CarConfigCountCentresAndSizes) {
  const Anchor3DRangeGenerator gen(pointpillars_kitti_car_options().bbox_head.anchor_generator);
  EXPECT_EQ(gen.num_base_anchors(), 2);
  // SECONDFPN output of a 496 × 432 canvas: 248 × 216 cells of 0.32 m.
  const at::Tensor a = gen.grid_anchors(248, 216, kF64);
  ASSERT_EQ(a.sizes(), (std::vector<int64_t>{248, 216, 1, 2, 7}));
  EXPECT_EQ(a.numel() / 7, 107136);
  expect_box(a[0][0][0][0], {0.16, -39.52, -1.78, 3.9, 1.6, 1.56, 0.0});
  expect_box(a[0][0][0][1], {0.16, -39.52, -1.78, 3.9, 1.6, 1.56, 1.57});
  expect_box(a[0][1][0][0], {0.48, -39.52, -1.78, 3.9, 1.6, 1.56, 0.0});
  expect_box(a[1][0][0][0], {0.16, -39.20, -1.78, 3.9, 1.6, 1.56, 0.0});
  expect_box(a[247][215][0][1], {68.96, 39.52, -1.78, 3.9, 1.6, 1.56, 1.57});
}

TEST(AnchorGenerator, ThreeClassConfigOrdersSizesThenRotations) {
  const Anchor3DRangeGenerator gen(pointpillars_kitti_3class_options().bbox_head.anchor_generator);
  EXPECT_EQ(gen.num_base_anchors(), 6);
  const at::Tensor a = gen.grid_anchors(248, 216, kF64);
  ASSERT_EQ(a.sizes(), (std::vector<int64_t>{248, 216, 3, 2, 7}));
  // Flattened: per cell Ped(0), Ped(1.57), Cyc(0), Cyc(1.57), Car(0), Car(1.57).
  const at::Tensor flat = a.reshape({-1, 7});
  expect_box(flat[0], {0.16, -39.52, -0.6, 0.8, 0.6, 1.73, 0.0});
  expect_box(flat[1], {0.16, -39.52, -0.6, 0.8, 0.6, 1.73, 1.57});
  expect_box(flat[2], {0.16, -39.52, -0.6, 1.76, 0.6, 1.73, 0.0});
  expect_box(flat[5], {0.16, -39.52, -1.78, 3.9, 1.6, 1.56, 1.57});
  expect_box(flat[6], {0.48, -39.52, -0.6, 0.8, 0.6, 1.73, 0.0});  // next cell along x
}

TEST(DeltaCoder, EncodeHandComputed) {
  // Reference: mmdet3d's formulas evaluated in Python (float64):
  // diagonal = sqrt(3.9² + 1.6²); z at gravity centres; log size ratios; raw yaw difference.
  const at::Tensor anchor = row({0, 0, -1.78, 3.9, 1.6, 1.56, 0});
  const at::Tensor gt = row({1, 2, -1.5, 4.2, 1.7, 1.6, 0.3});
  expect_box(DeltaXYZWLHRBBoxCoder::encode(anchor, gt),
             {0.23722272266019123, 0.47444544532038246, 0.19230769230769232, 0.07410797215372204,
              0.06062462181643484, 0.02531780798429, 0.3},
             1e-12);
}

TEST(DeltaCoder, DecodeInvertsEncode) {
  at::manual_seed(3);
  const int64_t n = 64;
  const at::Tensor centre = at::rand({n, 3}, kF64) * 40 - 20;
  const at::Tensor size = at::rand({n, 3}, kF64) * 4 + 0.3;
  const at::Tensor yaw = at::rand({n, 1}, kF64) * 6 - 3;
  const at::Tensor anchors = at::cat({centre, size, yaw}, 1);
  const at::Tensor boxes = anchors + at::randn({n, 7}, kF64) * 0.3;
  const at::Tensor boxes_pos =
      at::cat({boxes.narrow(1, 0, 3), boxes.narrow(1, 3, 3).abs() + 0.1, boxes.narrow(1, 6, 1)}, 1);
  const at::Tensor deltas = DeltaXYZWLHRBBoxCoder::encode(anchors, boxes_pos);
  EXPECT_TRUE(at::allclose(DeltaXYZWLHRBBoxCoder::decode(anchors, deltas), boxes_pos, 0, 1e-10));
  // Zero deltas decode to the anchor itself.
  EXPECT_TRUE(at::allclose(DeltaXYZWLHRBBoxCoder::decode(anchors, at::zeros_like(anchors)), anchors,
                           0, 1e-12));
}

TEST(BoxMath, LimitPeriodAndDirectionTarget) {
  const at::Tensor v = row({-4.0, 0.0, 3.0, 7.0});
  EXPECT_TRUE(at::allclose(limit_period(v, 0.5, M_PI),
                           row({-4.0 + M_PI, 0.0, 3.0 - M_PI, 7.0 - 2 * M_PI}), 0, 1e-12));
  // dir_offset -π/2, limit 0: bin 0 for yaw in [-π/2, π/2), bin 1 otherwise.
  const at::Tensor anchors = at::zeros({4, 7}, kF64);
  at::Tensor reg = at::zeros({4, 7}, kF64);
  reg.select(1, 6).copy_(row({0.0, 1.5, 1.6, -1.6}));
  const at::Tensor bins = direction_target(anchors, reg, -M_PI / 2, 0.0);
  EXPECT_TRUE(at::equal(bins, at::tensor({0, 0, 1, 1}, at::kLong))) << bins;
}

TEST(Max3DIoUAssigner, ThresholdsAndLowQualityMatches) {
  const Max3DIoUAssigner car({0.6, 0.45, 0.45, true, true});
  // overlaps [gts, anchors]
  const at::Tensor overlaps = at::tensor({0.7, 0.5, 0.1, 0.3, 0.0,  //
                                          0.2, 0.55, 0.4, 0.2, 0.0},
                                         at::kFloat)
                                  .view({2, 5});
  // a0 ≥ 0.6 → gt0; a1 between thresholds, but gt1's best anchor → gt1; the rest < 0.45 → neg.
  EXPECT_TRUE(at::equal(car.assign_wrt_overlaps(overlaps).assigned_gt_inds,
                        at::tensor({1, 2, 0, 0, 0}, at::kLong)));
  // gt1's best (0.4) is below min_pos_iou: a1 stays ignored (-1).
  const at::Tensor weak = at::tensor({0.7, 0.5, 0.1, 0.3, 0.0,  //
                                      0.2, 0.4, 0.4, 0.2, 0.0},
                                     at::kFloat)
                              .view({2, 5});
  EXPECT_TRUE(at::equal(car.assign_wrt_overlaps(weak).assigned_gt_inds,
                        at::tensor({1, -1, 0, 0, 0}, at::kLong)));
  // gt_max_assign_all: every anchor tied at a gt's best IoU is matched to it.
  const Max3DIoUAssigner ped({0.5, 0.35, 0.35, true, true});
  const at::Tensor ties = at::tensor({0.4, 0.4, 0.1}, at::kFloat).view({1, 3});
  EXPECT_TRUE(
      at::equal(ped.assign_wrt_overlaps(ties).assigned_gt_inds, at::tensor({1, 1, 0}, at::kLong)));
  const Max3DIoUAssigner ped_one({0.5, 0.35, 0.35, false, true});
  EXPECT_TRUE(at::equal(ped_one.assign_wrt_overlaps(ties).assigned_gt_inds,
                        at::tensor({1, -1, 0}, at::kLong)));
}

TEST(Max3DIoUAssigner, AssignsBoxesByNearestBevIou) {
  const Max3DIoUAssigner car({0.6, 0.45, 0.45, true, true});
  // Anchors along x every 2 m, yaw 0 and π/2 at x = 0.
  const at::Tensor anchors =
      at::stack({row({0, 0, -1.78, 3.9, 1.6, 1.56, 0}), row({0, 0, -1.78, 3.9, 1.6, 1.56, 1.57}),
                 row({2, 0, -1.78, 3.9, 1.6, 1.56, 0}), row({8, 0, -1.78, 3.9, 1.6, 1.56, 0})});
  // A car 0.3 m ahead of anchor 0: nearest-BEV IoU 5.76 / 6.72 = 3.6 / 4.2 with it.
  const at::Tensor gts = at::stack({row({0.3, 0, -1.7, 3.9, 1.6, 1.5, 0.05})});
  const AssignResult r = car.assign(anchors, gts);
  // anchor 1 (crossed): IoU 1.6·1.6 / (2·6.24 - 2.56) ≈ 0.26 → negative;
  // anchor 2: overlap 2.2·1.6 = 3.52 of union 8.96 → 0.39 → negative; anchor 3: disjoint.
  EXPECT_TRUE(at::equal(r.assigned_gt_inds, at::tensor({1, 0, 0, 0}, at::kLong)))
      << r.assigned_gt_inds;
  EXPECT_NEAR(r.max_overlaps[0].item<double>(), 3.6 / 4.2, 1e-9);
  // No gt: everything negative.
  EXPECT_TRUE(at::equal(car.assign(anchors, at::zeros({0, 7}, kF64)).assigned_gt_inds,
                        at::zeros({4}, at::kLong)));
}

TEST(Options, ValidationNamesTheKey) {
  PointPillarsOptions o = pointpillars_kitti_car_options();
  EXPECT_NO_THROW(validate(o));
  EXPECT_NO_THROW(validate(pointpillars_kitti_3class_options()));
  o.backbone.layer_nums = {3, 5};
  try {
    validate(o);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("model.backbone.layer_nums"), std::string::npos)
        << e.what();
  }
  o = pointpillars_kitti_car_options();
  o.bbox_head.in_channels = 256;
  EXPECT_THROW(validate(o), std::invalid_argument);
  o = pointpillars_kitti_3class_options();
  o.train_cfg.assigner.pop_back();
  EXPECT_THROW(validate(o), std::invalid_argument);
  // A grid that is not a multiple of the total stride 8 breaks the neck's concatenation.
  o = pointpillars_kitti_car_options();
  o.middle_encoder.output_shape = {124, 128};
  try {
    validate(o);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("model.middle_encoder.output_shape"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace ddp3d::models
