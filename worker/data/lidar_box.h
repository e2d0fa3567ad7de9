// 3D boxes in the lidar frame, mmdetection3d's convention (LiDARInstance3DBoxes):
// (x, y, z) = bottom centre, (l, w, h) = sizes along the box's x, y, z axes, yaw = rotation
// about z from the lidar x axis. Conversions to and from KITTI's camera-frame labels.
#pragma once

#include <array>
#include <string>

#include "worker/data/kitti_calib.h"
#include "worker/data/kitti_label.h"

namespace ddp3d::data {

struct LidarBox {
  double x = 0, y = 0, z = 0;  // bottom centre
  double l = 0, w = 0, h = 0;
  double yaw = 0;
};

// KITTI image size used for projections (training images are about 1242 x 375).
inline constexpr double kImageWidth = 1242.0;
inline constexpr double kImageHeight = 375.0;

// Wraps an angle into [-pi, pi).
double wrap_angle(double a);

// The 8 corners: bottom face first (counter-clockwise seen from above), then the top face.
std::array<Vec3, 8> box_corners(const LidarBox& box);

// A KITTI label (camera frame) as a lidar box: yaw = -rotation_y - pi/2.
LidarBox lidar_box_from_kitti(const KittiObject& object, const KittiCalib& calib);

// The KITTI label of a lidar box: location, dimensions, rotation_y, alpha, and the 2D box
// from projecting its corners with P2, clipped to the image, with truncation = the share of
// the projected box outside the image. Occlusion is left for the caller.
KittiObject kitti_object_from_lidar_box(const LidarBox& box, const KittiCalib& calib,
                                        const std::string& type);

}  // namespace ddp3d::data
