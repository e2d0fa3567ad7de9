// Rotated rectangle and box overlaps against hand-computed cases.
#include "worker/eval/box_overlap.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

namespace ddp3d::eval {
namespace {

constexpr double kPi = std::numbers::pi;

TEST(GroundRect, CornersFollowKittiYawConvention) {
  // rotation_y = pi/2 turns the length axis from +x to -z: a 4 x 2 box then spans x in [-1, 1]
  // and z in [-2, 2].
  const auto corners = ground_rect_corners({0, 0, 4, 2, kPi / 2});
  double min_x = 1e9, max_x = -1e9, min_z = 1e9, max_z = -1e9;
  for (const auto& c : corners) {
    min_x = std::min(min_x, c[0]);
    max_x = std::max(max_x, c[0]);
    min_z = std::min(min_z, c[1]);
    max_z = std::max(max_z, c[1]);
  }
  EXPECT_NEAR(min_x, -1, 1e-12);
  EXPECT_NEAR(max_x, 1, 1e-12);
  EXPECT_NEAR(min_z, -2, 1e-12);
  EXPECT_NEAR(max_z, 2, 1e-12);
  // Heading of rotation_y = pi/2 is (cos, -sin) = (0, -1): corner 1 = centre + along - across.
  EXPECT_NEAR(corners[1][1], -2, 1e-12);
}

TEST(GroundRect, IdenticalBoxesHaveIouOne) {
  const GroundRect r{3, 7, 4.2, 1.7, 0.3};
  EXPECT_NEAR(ground_intersection_area(r, r), 4.2 * 1.7, 1e-12);
  EXPECT_NEAR(bev_iou(r, r), 1.0, 1e-12);
}

TEST(GroundRect, ShiftedAxisAlignedBoxes) {
  // 4 x 2 boxes, centres 2 m apart along the length: intersection 2 x 2 = 4, union 12.
  EXPECT_NEAR(bev_iou({0, 0, 4, 2, 0}, {2, 0, 4, 2, 0}), 1.0 / 3, 1e-12);
  // Shift across (z) by 1: intersection 4 x 1 = 4, union 12.
  EXPECT_NEAR(bev_iou({0, 0, 4, 2, 0}, {0, 1, 4, 2, 0}), 1.0 / 3, 1e-12);
}

TEST(GroundRect, CrossedBoxes) {
  // A 4 x 2 box and the same box turned by 90 degrees overlap in a 2 x 2 square.
  EXPECT_NEAR(ground_intersection_area({0, 0, 4, 2, 0}, {0, 0, 4, 2, kPi / 2}), 4, 1e-12);
  EXPECT_NEAR(bev_iou({0, 0, 4, 2, 0}, {0, 0, 4, 2, kPi / 2}), 1.0 / 3, 1e-12);
}

TEST(GroundRect, SquareAndDiamondFormRegularOctagon) {
  // A 2 x 2 square and itself turned by 45 degrees: the square minus four corner triangles
  // with legs 2 - sqrt(2): area 8 sqrt(2) - 8, IoU 1 / sqrt(2).
  const GroundRect square{0, 0, 2, 2, 0};
  const GroundRect diamond{0, 0, 2, 2, kPi / 4};
  EXPECT_NEAR(ground_intersection_area(square, diamond), 8 * std::sqrt(2.0) - 8, 1e-12);
  EXPECT_NEAR(bev_iou(square, diamond), 1 / std::sqrt(2.0), 1e-12);
}

TEST(GroundRect, RotationByPiIsTheSameFootprint) {
  EXPECT_NEAR(bev_iou({1, 2, 4, 2, 0.4}, {1, 2, 4, 2, 0.4 + kPi}), 1.0, 1e-12);
}

TEST(GroundRect, CornerOverlapOfRotatedBox) {
  // Unit square [0,1]^2 (centre 0.5, 0.5) and a 2 x 2 square centred at the origin turned by
  // 45 degrees (a diamond |x| + |z| <= sqrt(2)): the part of the unit square under the line
  // x + z = sqrt(2) is 1 - (2 - sqrt(2))^2 / 2.
  const double expected = 1 - std::pow(2 - std::sqrt(2.0), 2) / 2;
  EXPECT_NEAR(ground_intersection_area({0.5, 0.5, 1, 1, 0}, {0, 0, 2, 2, kPi / 4}), expected,
              1e-12);
}

TEST(GroundRect, DisjointTouchingAndDegenerate) {
  EXPECT_EQ(bev_iou({0, 0, 4, 2, 0}, {10, 0, 4, 2, 0.7}), 0);
  EXPECT_NEAR(bev_iou({0, 0, 4, 2, 0}, {4, 0, 4, 2, 0}), 0, 1e-12);  // sharing an edge
  // KITTI's DontCare rows carry dimensions -1: no area, no overlap.
  EXPECT_EQ(bev_iou({0, 0, -1, -1, -10}, {0, 0, 4, 2, 0}), 0);
}

TEST(Box3d, HeightOverlapScalesTheGroundIntersection) {
  // Camera y points down and y is the bottom: heights span [-2, 0] and [-3, -1] → overlap 1.
  const CameraBox3d a{{0, 0, 4, 2, 0}, 0, 2};
  const CameraBox3d b{{0, 0, 4, 2, 0}, -1, 2};
  EXPECT_NEAR(box3d_iou(a, b), 8.0 / (16 + 16 - 8), 1e-12);
  // Shifted by 2 m as well: ground 4 x vertical 1 = 4 over 16 + 16 - 4.
  const CameraBox3d c{{2, 0, 4, 2, 0}, -1, 2};
  EXPECT_NEAR(box3d_iou(a, c), 4.0 / 28, 1e-12);
  // Stacked with no vertical overlap.
  const CameraBox3d d{{0, 0, 4, 2, 0}, -2, 2};
  EXPECT_EQ(box3d_iou(a, d), 0);
  EXPECT_NEAR(box3d_iou(a, a), 1.0, 1e-12);
}

TEST(ImageBox, OverlapByUnionAndByFirstArea) {
  EXPECT_NEAR(image_box_overlap({0, 0, 10, 10}, {5, 0, 15, 10}), 50.0 / 150, 1e-12);
  EXPECT_NEAR(image_box_overlap({0, 0, 10, 10}, {5, 0, 15, 10}, OverlapNorm::kFirst), 0.5, 1e-12);
  // A detection fully inside a DontCare region: 1 by its own area.
  EXPECT_NEAR(image_box_overlap({2, 2, 4, 4}, {0, 0, 10, 10}, OverlapNorm::kFirst), 1.0, 1e-12);
  EXPECT_EQ(image_box_overlap({0, 0, 10, 10}, {10, 0, 20, 10}), 0);
}

}  // namespace
}  // namespace ddp3d::eval
