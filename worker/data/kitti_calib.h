// KITTI calibration (calib/XXXXXX.txt): camera projections P0..P3, rectification R0_rect and
// the velodyne-to-camera transform Tr_velo_to_cam, plus the point and box transforms between
// the lidar frame and the rectified camera frame that KITTI labels live in.
#pragma once

#include <array>
#include <string>

namespace ddp3d::data {

using Vec3 = std::array<double, 3>;

struct KittiCalib {
  std::array<double, 12> P2{};              // 3x4, row-major: rectified camera 2 projection
  std::array<double, 9> R0_rect{};          // 3x3, row-major
  std::array<double, 12> Tr_velo_to_cam{};  // 3x4, row-major
  std::array<double, 12> Tr_imu_to_velo{};  // 3x4, kept for a faithful round trip

  // Rectified camera coordinates of a lidar point: R0_rect * (Tr_velo_to_cam * [p; 1]).
  Vec3 lidar_to_camera(const Vec3& p) const;
  // The inverse of lidar_to_camera.
  Vec3 camera_to_lidar(const Vec3& p) const;
  // Pixel (u, v) and depth of a rectified camera point projected by P2.
  std::array<double, 3> project_to_image(const Vec3& camera_point) const;
};

// Parses calib text. `path` only names the file in errors, which give its line:
// "calib/000001.txt:5: Tr_velo_to_cam: expected 12 numbers, got 11".
KittiCalib parse_kitti_calib(const std::string& text, const std::string& path);
KittiCalib read_kitti_calib(const std::string& path);
std::string format_kitti_calib(const KittiCalib& calib);

// Calibration values of a KITTI recording day (2011_09_26), used by the synthetic data.
KittiCalib typical_kitti_calib();

}  // namespace ddp3d::data
