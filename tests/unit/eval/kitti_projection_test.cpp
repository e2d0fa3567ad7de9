// 2D boxes and alpha of predicted 3D boxes, against hand-projected corners.
#include "worker/eval/kitti_projection.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

namespace ddp3d::eval {
namespace {

// A pinhole camera with f = 700 px and principal point (600, 180).
const Projection kP2{{{700, 0, 600, 0}, {0, 700, 180, 0}, {0, 0, 1, 0}}};

TEST(KittiProjection, CornersSpanTheBox) {
  const auto corners = camera_box_corners({0, 1, 10}, {1.5, 1.6, 4}, 0);
  for (int i = 0; i < 4; ++i) EXPECT_DOUBLE_EQ(corners[i][1], 1);        // bottom face
  for (int i = 4; i < 8; ++i) EXPECT_DOUBLE_EQ(corners[i][1], 1 - 1.5);  // top face
  double min_x = 1e9, max_x = -1e9, min_z = 1e9, max_z = -1e9;
  for (const auto& c : corners) {
    min_x = std::min(min_x, c[0]);
    max_x = std::max(max_x, c[0]);
    min_z = std::min(min_z, c[2]);
    max_z = std::max(max_z, c[2]);
  }
  EXPECT_NEAR(min_x, -2, 1e-12);  // length 4 along x at rotation_y = 0
  EXPECT_NEAR(max_x, 2, 1e-12);
  EXPECT_NEAR(min_z, 9.2, 1e-12);  // width 1.6 along z
  EXPECT_NEAR(max_z, 10.8, 1e-12);
}

TEST(KittiProjection, BoxAheadProjectsToTheNearFaceExtent) {
  // The extremes come from the near face (z = 9.2): u = 600 ± 700·2/9.2,
  // v from y = -0.5 (top) to y = 1 (bottom).
  const auto box = project_box_to_image({0, 1, 10}, {1.5, 1.6, 4}, 0, kP2, 1242, 375);
  ASSERT_TRUE(box.has_value());
  EXPECT_NEAR((*box)[0], 600 - 1400 / 9.2, 1e-9);
  EXPECT_NEAR((*box)[2], 600 + 1400 / 9.2, 1e-9);
  EXPECT_NEAR((*box)[1], 180 - 350 / 9.2, 1e-9);
  EXPECT_NEAR((*box)[3], 180 + 700 / 9.2, 1e-9);
}

TEST(KittiProjection, ClipsToTheImageAndDropsBoxesOutsideIt) {
  // Far to the left but partly in view: clipped at u = 0.
  const auto partial = project_box_to_image({-9, 1, 10}, {1.5, 1.6, 4}, 0, kP2, 1242, 375);
  ASSERT_TRUE(partial.has_value());
  EXPECT_DOUBLE_EQ((*partial)[0], 0);
  EXPECT_GT((*partial)[2], 0);
  // Entirely left of the image.
  EXPECT_FALSE(project_box_to_image({-30, 1, 10}, {1.5, 1.6, 4}, 0, kP2, 1242, 375).has_value());
}

TEST(KittiProjection, ObservationAlpha) {
  EXPECT_DOUBLE_EQ(observation_alpha(0, 10, 0.3), 0.3);  // straight ahead: alpha = yaw
  EXPECT_NEAR(observation_alpha(5, 5, 0.3), 0.3 - std::numbers::pi / 4, 1e-12);
}

}  // namespace
}  // namespace ddp3d::eval
