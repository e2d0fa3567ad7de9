#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "worker/data/kitti_calib.h"
#include "worker/data/kitti_label.h"
#include "worker/data/lidar_box.h"

namespace ddp3d::data {
namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no error";
}

TEST(KittiCalib, FormatParseRoundTripAndPointTransformsInvert) {
  const KittiCalib c = typical_kitti_calib();
  const KittiCalib back = parse_kitti_calib(format_kitti_calib(c), "calib.txt");
  for (int i = 0; i < 12; ++i) EXPECT_DOUBLE_EQ(back.Tr_velo_to_cam[i], c.Tr_velo_to_cam[i]);
  const Vec3 p{12.5, -3.25, -1.2};
  const Vec3 q = c.camera_to_lidar(c.lidar_to_camera(p));
  for (int a = 0; a < 3; ++a) EXPECT_NEAR(q[a], p[a], 1e-9);
  // Lidar x (forward) is camera z (depth); lidar y (left) is camera -x.
  const Vec3 ahead = c.lidar_to_camera({20, 0, 0});
  EXPECT_NEAR(ahead[2], 20.0, 0.5);
  const Vec3 left = c.lidar_to_camera({20, 5, 0});
  EXPECT_LT(left[0], ahead[0] - 4.5);
}

TEST(KittiCalib, ErrorsNameFileLineAndKey) {
  EXPECT_NE(error_of([] {
              parse_kitti_calib("P2: 1 2 3\n", "calib/7.txt");
            }).find("calib/7.txt:1: P2: expected 12 numbers, got 3"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_kitti_calib("R0_rect: 1 0 0 0 1 0 0 0 x\n", "c.txt");
            }).find("c.txt:1: R0_rect: 'x' is not a number"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_kitti_calib("", "c.txt"); }).find("c.txt: missing key P2"),
            std::string::npos);
}

TEST(KittiLabel, ParsesFormatsAndNamesBadLines) {
  const std::string text =
      "Car 0.00 0 -1.58 587.01 173.33 614.12 200.12 1.65 1.67 3.64 -0.65 1.71 46.70 -1.59\n"
      "Pedestrian 0.00 1 0.21 423.17 173.67 433.17 224.03 1.60 0.38 0.30 -5.87 1.63 23.11 "
      "-0.03 0.87\n";
  const auto objects = parse_kitti_labels(text, "label.txt");
  ASSERT_EQ(objects.size(), 2u);
  EXPECT_EQ(objects[0].type, "Car");
  EXPECT_DOUBLE_EQ(objects[0].location[2], 46.70);
  EXPECT_FALSE(objects[0].has_score);
  EXPECT_TRUE(objects[1].has_score);
  EXPECT_DOUBLE_EQ(objects[1].score, 0.87);
  EXPECT_EQ(parse_kitti_labels(format_kitti_labels(objects), "x").size(), 2u);
  EXPECT_NE(error_of([] {
              parse_kitti_labels("Car 0 0\n\nCar 1 2 3\n", "label_2/3.txt");
            }).find("label_2/3.txt:1: expected 15 or 16 fields, got 3"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_kitti_labels("Car 0 0 0 1 2 3 4 1.5 1.6 zz 0 1 20 0\n", "l.txt");
            }).find("l.txt:1: dimensions (field 11): 'zz' is not a number"),
            std::string::npos);
}

TEST(KittiLabel, LabelAndResultStylesWriteTheDevkitsLines) {
  KittiObject o;
  o.type = "Car";
  o.truncated = 0.5;
  o.occluded = 2;
  o.alpha = -1.23456;
  o.bbox = {100, 150.5, 200.25, 250.126};
  o.dimensions = {1.5, 1.6, 3.9};
  o.location = {1, 2, 30.12346};
  o.rotation_y = 0.1;
  EXPECT_EQ(format_kitti_labels({o}),
            "Car 0.50 2 -1.23 100.00 150.50 200.25 250.13 1.50 1.60 3.90 1.00 2.00 30.12 0.10\n");
  o.has_score = true;
  o.score = 0.87654;
  EXPECT_EQ(format_kitti_labels({o}, KittiLabelStyle::kResult),
            "Car -1 -1 -1.2346 100.0000 150.5000 200.2500 250.1260 1.5000 1.6000 3.9000 1.0000 "
            "2.0000 30.1235 0.1000 0.8765\n");
  const auto back = parse_kitti_labels(format_kitti_labels({o, o}, KittiLabelStyle::kResult), "r");
  ASSERT_EQ(back.size(), 2U);
  EXPECT_EQ(back[0].truncated, -1);
  EXPECT_EQ(back[0].occluded, -1);
  EXPECT_DOUBLE_EQ(back[0].score, 0.8765);
}

TEST(LidarBox, KittiRoundTripAndYawConvention) {
  const KittiCalib c = typical_kitti_calib();
  const LidarBox box{20.0, 4.0, -1.7, 4.0, 1.6, 1.5, 0.3};
  const KittiObject o = kitti_object_from_lidar_box(box, c, "Car");
  // A car facing along lidar +x has rotation_y = -pi/2 in KITTI's camera frame.
  EXPECT_NEAR(kitti_object_from_lidar_box({20, 0, -1.7, 4, 1.6, 1.5, 0}, c, "Car").rotation_y,
              -std::numbers::pi / 2, 1e-9);
  EXPECT_DOUBLE_EQ(o.dimensions[0], 1.5);  // h, w, l
  EXPECT_DOUBLE_EQ(o.dimensions[2], 4.0);
  const LidarBox back = lidar_box_from_kitti(o, c);
  EXPECT_NEAR(back.x, box.x, 1e-9);
  EXPECT_NEAR(back.y, box.y, 1e-9);
  EXPECT_NEAR(back.z, box.z, 1e-9);
  EXPECT_NEAR(back.yaw, box.yaw, 1e-9);
  // The projection of a car 20 m ahead lies inside the image and is not truncated.
  EXPECT_GT(o.bbox[2] - o.bbox[0], 20.0);
  EXPECT_LT(o.truncated, 0.01);
  // Far to the side it leaves the image.
  EXPECT_GT(kitti_object_from_lidar_box({8, 9, -1.7, 4, 1.6, 1.5, 0}, c, "Car").truncated, 0.3);
}

}  // namespace
}  // namespace ddp3d::data
