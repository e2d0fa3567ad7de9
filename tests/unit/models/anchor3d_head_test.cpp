// Anchor3DHead: targets with per-class assignment, losses, and inference on a small grid.
#include "worker/models/dense_heads/anchor3d_head.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>

#include "worker/models/task_modules/delta_xyzwlhr_bbox_coder.h"

namespace ddp3d::models {
namespace {

// A 3-class head over a 4 × 5 grid of 2 m cells: x in [0, 10], y in [-4, 4].
Anchor3DHeadOptions small_head_options() {
  Anchor3DHeadOptions o;
  o.in_channels = o.feat_channels = 8;
  o.anchor_generator.ranges = {
      {0, -4, -0.6, 10, 4, -0.6}, {0, -4, -0.6, 10, 4, -0.6}, {0, -4, -1.78, 10, 4, -1.78}};
  return o;
}

Anchor3DHead small_head() {
  return Anchor3DHead(small_head_options(), TrainCfg{}, TestCfg{});
}

// Flat index of (row h, column w, class k, rotation r) on the 4 × 5 grid.
int64_t flat_index(int64_t h, int64_t w, int64_t k, int64_t r) {
  return ((h * 5 + w) * 3 + k) * 2 + r;
}

TEST(Anchor3DHead, OutputChannels) {
  Anchor3DHead head = small_head();
  EXPECT_EQ(head->num_anchors_per_location(), 6);
  const HeadOutputs out = head->forward(at::randn({2, 8, 4, 5}));
  EXPECT_EQ(out.cls_score.sizes(), (std::vector<int64_t>{2, 18, 4, 5}));
  EXPECT_EQ(out.bbox_pred.sizes(), (std::vector<int64_t>{2, 42, 4, 5}));
  EXPECT_EQ(out.dir_cls_pred.sizes(), (std::vector<int64_t>{2, 12, 4, 5}));
  // conv_cls bias from the 0.01 prior: every initial score is ~0.01.
  EXPECT_NEAR(out.cls_score.sigmoid().mean().item<double>(), 0.01, 0.005);
}

TEST(Anchor3DHead, TargetsAssignPerClass) {
  Anchor3DHead head = small_head();
  const at::Tensor anchors = head->anchors(4, 5, at::kDouble);
  // A car exactly on the yaw-0 car anchor of cell (row 2, col 1), yaw π (direction bin 1), and
  // a pedestrian on the yaw-π/2 pedestrian anchor of cell (row 0, col 4).
  const at::Tensor car = anchors[2][1][2][0].clone();
  car[6] = M_PI;
  const at::Tensor ped = anchors[0][4][0][1].clone();
  const std::vector<at::Tensor> gt_boxes{at::stack({car, ped})};
  const std::vector<at::Tensor> gt_labels{at::tensor({2, 0}, at::kLong)};
  const HeadTargets t = head->targets(anchors, gt_boxes, gt_labels);
  ASSERT_EQ(t.labels.sizes(), (std::vector<int64_t>{1, 120}));
  const at::Tensor labels = t.labels[0];
  const int64_t car_idx = flat_index(2, 1, 2, 0);
  const int64_t ped_idx = flat_index(0, 4, 0, 1);
  EXPECT_EQ(labels[car_idx].item<int64_t>(), 2);
  EXPECT_EQ(labels[ped_idx].item<int64_t>(), 0);
  // The pedestrian's crossed (yaw 0) anchor has nearest-BEV IoU 0.36 / 0.6 = 0.6 ≥ 0.5 with
  // it, so it is positive too: 3 positives. The pedestrian- and cyclist-sized anchors of the
  // car's cell never see the car (per-class assignment).
  EXPECT_EQ(labels[flat_index(0, 4, 0, 0)].item<int64_t>(), 0);
  EXPECT_EQ((labels < 3).sum().item<int64_t>(), 3);
  EXPECT_EQ(labels[flat_index(2, 1, 0, 0)].item<int64_t>(), 3);
  EXPECT_EQ(labels[flat_index(2, 1, 1, 0)].item<int64_t>(), 3);
  EXPECT_EQ(t.num_total_pos, 3);
  // Exact anchor match: zero deltas except the yaw difference π; direction bin 1.
  EXPECT_TRUE(at::allclose(t.bbox_targets[0][car_idx],
                           at::tensor({0.0, 0.0, 0.0, 0.0, 0.0, 0.0, M_PI}, at::kDouble), 0, 1e-9));
  EXPECT_EQ(t.dir_targets[0][car_idx].item<int64_t>(), 1);
  EXPECT_EQ(t.dir_targets[0][ped_idx].item<int64_t>(), 0);
  EXPECT_EQ(t.bbox_weights[0].sum().item<double>(), 21.0);
  // The crossed car anchor of the same cell is below neg_iou_thr (0.26): a weighted negative.
  EXPECT_EQ(labels[flat_index(2, 1, 2, 1)].item<int64_t>(), 3);
  EXPECT_EQ(t.label_weights[0][flat_index(2, 1, 2, 1)].item<double>(), 1.0);

  // No gt at all: everything negative, normaliser clamped to 1.
  const HeadTargets empty =
      head->targets(anchors, {at::zeros({0, 7}, at::kDouble)}, {at::zeros({0}, at::kLong)});
  EXPECT_TRUE((empty.labels == 3).all().item<bool>());
  EXPECT_TRUE((empty.label_weights == 1).all().item<bool>());
  EXPECT_EQ(empty.num_total_pos, 1);
  EXPECT_THROW(head->targets(anchors, gt_boxes, {at::tensor({3, 0}, at::kLong)}), c10::Error);
}

TEST(Anchor3DHead, LossesAreFiniteAndReachEveryParameter) {
  Anchor3DHead head = small_head();
  const at::Tensor anchors = head->anchors(4, 5, at::kFloat);
  const at::Tensor car =
      anchors[1][2][2][0] + at::tensor({0.2f, -0.1f, 0.0f, 0.1f, 0.0f, 0.0f, 0.1f});
  const std::vector<at::Tensor> gt_boxes{car.unsqueeze(0), at::zeros({0, 7})};
  const std::vector<at::Tensor> gt_labels{at::tensor({2}, at::kLong), at::zeros({0}, at::kLong)};
  const HeadOutputs out = head->forward(at::randn({2, 8, 4, 5}));
  const LossMap losses = head->loss(out, gt_boxes, gt_labels);
  ASSERT_EQ(losses.size(), 3u);
  at::Tensor total;
  for (const auto& [name, value] : losses) {
    EXPECT_TRUE(std::isfinite(value.item<double>())) << name;
    EXPECT_GT(value.item<double>(), 0.0) << name;
    total = total.defined() ? total + value : value;
  }
  total.backward();
  for (const auto& p : head->named_parameters()) {
    ASSERT_TRUE(p.value().grad().defined()) << p.key();
    EXPECT_GT(p.value().grad().abs().sum().item<double>(), 0.0) << p.key();
  }
}

TEST(Anchor3DHead, PredictDecodesSuppressesAndFixesDirection) {
  Anchor3DHead head = small_head();
  // Hand-made outputs: logits -10 everywhere except two car anchors of cell (2, 3), both
  // rotations, and one cyclist anchor far away; zero deltas (boxes = anchors).
  at::Tensor cls = at::full({1, 18, 4, 5}, -10.0);
  const int64_t car0 = (2 * 2 + 0) * 3 + 2;  // channel (anchor a = size·2 + rot) · C + class
  const int64_t car1 = (2 * 2 + 1) * 3 + 2;
  const int64_t cyc0 = (1 * 2 + 0) * 3 + 1;
  cls[0][car0][2][3] = 3.0;  // σ = 0.953
  cls[0][car1][2][3] = 2.0;  // σ = 0.881, overlaps the first (IoU 0.26 > nms_thr 0.01)
  cls[0][cyc0][0][0] = 1.0;  // σ = 0.731
  at::Tensor dir = at::zeros({1, 12, 4, 5});
  dir[0][2 * 2 * 2 + 1][2][3] = 5.0;  // car yaw-0 anchor: direction bin 1 → yaw π
  const HeadOutputs out{cls, at::zeros({1, 42, 4, 5}), dir};
  const std::vector<Detections> dets = head->predict(out);
  ASSERT_EQ(dets.size(), 1u);
  const Detections& d = dets[0];
  ASSERT_EQ(d.boxes.size(0), 2) << d.boxes;
  // Per-class NMS: cyclist first (class order), then the kept car.
  EXPECT_TRUE(at::equal(d.labels, at::tensor({1, 2}, at::kLong)));
  EXPECT_NEAR(d.scores[0].item<double>(), 1 / (1 + std::exp(-1.0)), 1e-6);
  EXPECT_NEAR(d.scores[1].item<double>(), 1 / (1 + std::exp(-3.0)), 1e-6);
  const at::Tensor anchors = head->anchors(4, 5, at::kFloat);
  at::Tensor want_car = anchors[2][3][2][0].clone();
  want_car[6] = M_PI;
  EXPECT_TRUE(at::allclose(d.boxes[1], want_car, 0, 1e-5)) << d.boxes[1];
  EXPECT_TRUE(at::allclose(d.boxes[0], anchors[0][0][1][0], 0, 1e-5)) << d.boxes[0];
}

}  // namespace
}  // namespace ddp3d::models
