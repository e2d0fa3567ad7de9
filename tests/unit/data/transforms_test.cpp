#include "worker/data/transforms.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <numbers>

namespace ddp3d::data {
namespace {

DetectionSample sample() {
  DetectionSample s;
  s.points = at::tensor({10.f, 1.f, -1.f, 0.5f,     //
                         10.5f, 1.2f, -0.5f, 0.2f,  //
                         30.f, -5.f, 0.f, 0.1f,     //
                         80.f, 0.f, 0.f, 0.3f})
                 .view({4, 4});
  s.gt_boxes = at::tensor({10.f, 1.f, -1.7f, 4.f, 1.6f, 1.5f, 0.2f,  //
                           75.f, 0.f, -1.7f, 4.f, 1.6f, 1.5f, 3.0f})
                   .view({2, 7});
  s.gt_labels = at::tensor({0, -1}, at::kLong);
  return s;
}

TEST(Transforms, RangeFiltersAndNameFilter) {
  auto s = sample();
  const std::array<double, 6> range{0, -39.68, -3, 69.12, 39.68, 1};
  points_range_filter(s, range);
  EXPECT_EQ(s.points.size(0), 3);
  object_range_filter(s, range);
  EXPECT_EQ(s.gt_boxes.size(0), 1);
  object_name_filter(s);
  EXPECT_EQ(s.gt_boxes.size(0), 1);
  auto t = sample();
  object_name_filter(t);
  EXPECT_EQ(t.gt_boxes.size(0), 1);
  EXPECT_FLOAT_EQ(t.gt_boxes[0][0].item<float>(), 10.f);
}

TEST(Transforms, RotationMovesPointsAndBoxesTogether) {
  auto s = sample();
  rotate_scale_translate(s, std::numbers::pi / 2, 2.0, {1, 0, 0});
  // (10, 1) rotated by 90 degrees is (-1, 10), scaled (-2, 20), shifted (-1, 20).
  EXPECT_NEAR(s.points[0][0].item<float>(), -1.0, 1e-5);
  EXPECT_NEAR(s.points[0][1].item<float>(), 20.0, 1e-5);
  EXPECT_NEAR(s.points[0][2].item<float>(), -2.0, 1e-5);
  EXPECT_NEAR(s.gt_boxes[0][0].item<float>(), s.points[0][0].item<float>(), 1e-5);
  EXPECT_NEAR(s.gt_boxes[0][3].item<float>(), 8.0, 1e-5);
  EXPECT_NEAR(s.gt_boxes[0][6].item<float>(), 0.2 + std::numbers::pi / 2, 1e-5);
  // Yaw stays wrapped into [-pi, pi).
  EXPECT_LT(s.gt_boxes[1][6].item<float>(), std::numbers::pi);
}

TEST(Transforms, FlipTwiceIsIdentityAndShufflePermutes) {
  auto s = sample();
  const auto original = s.points.clone();
  flip_bev(s);
  EXPECT_FLOAT_EQ(s.points[0][1].item<float>(), -1.f);
  EXPECT_FLOAT_EQ(s.gt_boxes[0][6].item<float>(), -0.2f);
  flip_bev(s);
  EXPECT_TRUE(at::equal(s.points, original));
  std::mt19937_64 rng(3);
  point_shuffle(s, rng);
  EXPECT_TRUE(at::equal(std::get<0>(s.points.select(1, 3).sort()),
                        std::get<0>(original.select(1, 3).sort())));
}

}  // namespace
}  // namespace ddp3d::data
