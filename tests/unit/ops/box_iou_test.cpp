// Rotated / aligned / 3D box overlaps against hand-computed cases.
#include "worker/ops/box_iou.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>

namespace ddp3d::ops {
namespace {

at::Tensor bev(std::initializer_list<std::initializer_list<double>> rows) {
  std::vector<at::Tensor> r;
  for (const auto& row : rows) r.push_back(at::tensor(std::vector<double>(row), at::kDouble));
  return at::stack(r);
}

double iou1(std::initializer_list<double> a, std::initializer_list<double> b) {
  return box_iou_rotated_bev(bev({a}), bev({b})).item<double>();
}

TEST(BoxIouRotatedBev, IdenticalBoxesHaveIouOne) {
  EXPECT_NEAR(iou1({1, 2, 4, 2, 0.3}, {1, 2, 4, 2, 0.3}), 1.0, 1e-9);
  EXPECT_NEAR(iou1({-5, 7, 3.9, 1.6, -2.1}, {-5, 7, 3.9, 1.6, -2.1}), 1.0, 1e-9);
}

TEST(BoxIouRotatedBev, DisjointBoxesHaveIouZero) {
  EXPECT_EQ(iou1({0, 0, 2, 2, 0}, {5, 0, 2, 2, 0.7}), 0.0);
  // Circumscribed circles overlap but the rectangles do not (corner to corner).
  EXPECT_NEAR(iou1({0, 0, 2, 2, 0}, {2.1, 0.5, 2, 2, 0}), 0.0, 1e-12);
}

TEST(BoxIouRotatedBev, SquareAndItself45DegreesRotated) {
  // The intersection is a regular octagon of area 2√2 - 2; the union 4 - 2√2: IoU = 1/√2.
  EXPECT_NEAR(iou1({0, 0, 1, 1, 0}, {0, 0, 1, 1, M_PI / 4}), 1.0 / std::sqrt(2.0), 1e-9);
  const at::Tensor inter =
      box_intersection_rotated_bev(bev({{3, -1, 2, 2, 0}}), bev({{3, -1, 2, 2, M_PI / 4}}));
  EXPECT_NEAR(inter.item<double>(), 4 * (2 * std::sqrt(2.0) - 2), 1e-9);
}

TEST(BoxIouRotatedBev, ContainedBoxGivesAreaRatio) {
  // A 2×1 box turned by 30° fits inside a 4×2 box: IoU = 2 / 8.
  EXPECT_NEAR(iou1({0, 0, 4, 2, 0}, {0, 0, 2, 1, M_PI / 6}), 0.25, 1e-9);
}

TEST(BoxIouRotatedBev, ShiftedAndQuarterTurnedBoxes) {
  EXPECT_NEAR(iou1({0, 0, 2, 2, 0}, {1, 0, 2, 2, 0}), 1.0 / 3.0, 1e-9);
  // A 4×2 box turned by 90° is a 2×4 box.
  EXPECT_NEAR(iou1({0, 0, 4, 2, M_PI / 2}, {0, 0, 2, 4, 0}), 1.0, 1e-9);
  // Cross of 4×2 and 2×4: overlap 2×2 = 4, union 12.
  EXPECT_NEAR(iou1({0, 0, 4, 2, 0}, {0, 0, 4, 2, M_PI / 2}), 1.0 / 3.0, 1e-9);
}

TEST(BoxIouRotatedBev, PairwiseMatrixShapeAndSymmetry) {
  const at::Tensor a = bev({{0, 0, 4, 2, 0.2}, {1, 1, 3, 1, 1.0}, {10, 10, 1, 1, 0}});
  const at::Tensor b = bev({{0.5, 0, 4, 2, -0.3}, {1, 1, 3, 1, 1.0}});
  const at::Tensor ab = box_iou_rotated_bev(a, b);
  ASSERT_EQ(ab.sizes(), (std::vector<int64_t>{3, 2}));
  EXPECT_TRUE(at::allclose(ab, box_iou_rotated_bev(b, a).t(), 1e-9, 1e-12));
  EXPECT_NEAR(ab[1][1].item<double>(), 1.0, 1e-9);
  EXPECT_EQ(ab[2][0].item<double>(), 0.0);
  EXPECT_EQ(box_iou_rotated_bev(a.narrow(0, 0, 0), b).sizes(), (std::vector<int64_t>{0, 2}));
  // float32 in, float32 out.
  EXPECT_EQ(box_iou_rotated_bev(a.to(at::kFloat), b.to(at::kFloat)).scalar_type(), at::kFloat);
}

// Monte Carlo estimate of area(a ∩ b): points uniform in a, the fraction that lies in b.
double sampled_intersection(const at::Tensor& a, const at::Tensor& b, int64_t n) {
  const auto av = a.accessor<double, 1>();
  const auto bv = b.accessor<double, 1>();
  const at::Tensor u = (at::rand({n}, at::kDouble) - 0.5) * av[2];
  const at::Tensor v = (at::rand({n}, at::kDouble) - 0.5) * av[3];
  const at::Tensor x = av[0] + u * std::cos(av[4]) - v * std::sin(av[4]);
  const at::Tensor y = av[1] + u * std::sin(av[4]) + v * std::cos(av[4]);
  // Into b's frame.
  const at::Tensor bx = (x - bv[0]) * std::cos(bv[4]) + (y - bv[1]) * std::sin(bv[4]);
  const at::Tensor by = -(x - bv[0]) * std::sin(bv[4]) + (y - bv[1]) * std::cos(bv[4]);
  const at::Tensor inside = (bx.abs() <= bv[2] / 2) & (by.abs() <= bv[3] / 2);
  return inside.to(at::kDouble).mean().item<double>() * av[2] * av[3];
}

TEST(BoxIntersectionRotatedBev, AgreesWithMonteCarloOnRandomPairs) {
  at::manual_seed(17);
  const int64_t pairs = 40;
  const at::Tensor centre = at::rand({pairs, 2, 2}, at::kDouble) * 3;
  const at::Tensor size = at::rand({pairs, 2, 2}, at::kDouble) * 3 + 0.5;
  const at::Tensor yaw = (at::rand({pairs, 2, 1}, at::kDouble) - 0.5) * 2 * M_PI;
  const at::Tensor boxes = at::cat({centre, size, yaw}, 2);  // [pairs, 2, 5]
  const at::Tensor a = boxes.select(1, 0).contiguous();
  const at::Tensor b = boxes.select(1, 1).contiguous();
  const at::Tensor exact = box_intersection_rotated_bev(a, b).diagonal();
  int64_t overlapping = 0;
  for (int64_t i = 0; i < pairs; ++i) {
    const double mc = sampled_intersection(a[i], b[i], 200000);
    // σ of the estimate ≤ area(a)·0.5/√200000 ≈ 0.02 for the largest boxes: 4σ.
    EXPECT_NEAR(exact[i].item<double>(), mc, 0.08) << "pair " << i << ": " << a[i] << b[i];
    if (mc > 0.5) ++overlapping;
  }
  EXPECT_GT(overlapping, pairs / 2);  // the test exercises real overlaps, not empty pairs
}

TEST(BoxIouRotatedBev, RejectsMalformedInput) {
  EXPECT_THROW(box_iou_rotated_bev(at::zeros({3, 4}), at::zeros({2, 5})), c10::Error);
  EXPECT_THROW(box_iou_rotated_bev(at::zeros({3, 5}, at::kLong), at::zeros({2, 5})), c10::Error);
}

TEST(BoxIouAlignedBev, HandComputed) {
  const at::Tensor a = bev({{0, 0, 2, 2}, {0, 0, 1, 1}});
  const at::Tensor b = bev({{1, 1, 3, 3}, {5, 5, 6, 6}});
  const at::Tensor iou = box_iou_aligned_bev(a, b);
  EXPECT_NEAR(iou[0][0].item<double>(), 1.0 / 7.0, 1e-12);  // overlap 1, union 4 + 4 - 1
  EXPECT_EQ(iou[0][1].item<double>(), 0.0);
  EXPECT_EQ(iou[1][0].item<double>(), 0.0);  // touching at a corner only
}

TEST(NearestBev, SwapsExtentsPastQuarterTurn) {
  // (x, y, z, dx, dy, dz, yaw)
  const at::Tensor boxes = bev({{0, 0, 0, 4, 2, 1, 0.3},
                                {0, 0, 0, 4, 2, 1, M_PI / 2},
                                {1, 1, 0, 4, 2, 1, M_PI - 0.1},
                                {0, 0, 0, 4, 2, 1, -M_PI / 2 + 0.2}});
  const at::Tensor expected = bev({{-2, -1, 2, 1}, {-1, -2, 1, 2}, {-1, 0, 3, 2}, {-1, -2, 1, 2}});
  EXPECT_TRUE(at::allclose(nearest_bev(boxes), expected, 1e-12, 1e-12)) << nearest_bev(boxes);
  // Nearest-BEV IoU of a box and its quarter turn is the IoU of the crossed aligned boxes.
  EXPECT_NEAR(box_iou_nearest_bev(boxes.narrow(0, 0, 1), boxes.narrow(0, 1, 1)).item<double>(),
              1.0 / 3.0, 1e-12);
}

TEST(BoxIou3d, HeightOverlapScalesBevOverlap) {
  // Same footprint, z spans [0, 2] and [1, 3]: overlap 1·A, union 3·A.
  const at::Tensor a = bev({{0, 0, 0, 4, 2, 2, 0.4}});
  const at::Tensor b = bev({{0, 0, 1, 4, 2, 2, 0.4}});
  EXPECT_NEAR(box_iou_3d(a, b).item<double>(), 1.0 / 3.0, 1e-9);
  EXPECT_NEAR(box_iou_3d(a, a).item<double>(), 1.0, 1e-9);
  // Stacked without vertical overlap.
  EXPECT_EQ(box_iou_3d(a, bev({{0, 0, 2.5, 4, 2, 2, 0.4}})).item<double>(), 0.0);
  // Half the footprint (shift by dx/2 along the heading) and full height: 4 / (16 + 16 - 4).
  const double h = 2.0;
  const at::Tensor c = bev({{2 * std::cos(0.4), 2 * std::sin(0.4), 0, 4, 2, h, 0.4}});
  EXPECT_NEAR(box_iou_3d(a, c).item<double>(), 8.0 / (16 + 16 - 8), 1e-9);
}

}  // namespace
}  // namespace ddp3d::ops
