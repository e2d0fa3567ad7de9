#include "worker/data/lidar_box.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace ddp3d::data {

double wrap_angle(double a) {
  constexpr double kTwoPi = 2.0 * std::numbers::pi;
  a = std::fmod(a + std::numbers::pi, kTwoPi);
  if (a < 0) a += kTwoPi;
  return a - std::numbers::pi;
}

std::array<Vec3, 8> box_corners(const LidarBox& b) {
  const double c = std::cos(b.yaw), s = std::sin(b.yaw);
  const double hl = b.l / 2, hw = b.w / 2;
  const std::array<std::array<double, 2>, 4> local{{{hl, hw}, {-hl, hw}, {-hl, -hw}, {hl, -hw}}};
  std::array<Vec3, 8> out{};
  for (int i = 0; i < 4; ++i) {
    const double x = b.x + c * local[i][0] - s * local[i][1];
    const double y = b.y + s * local[i][0] + c * local[i][1];
    out[i] = {x, y, b.z};
    out[i + 4] = {x, y, b.z + b.h};
  }
  return out;
}

LidarBox lidar_box_from_kitti(const KittiObject& o, const KittiCalib& calib) {
  const Vec3 bottom = calib.camera_to_lidar({o.location[0], o.location[1], o.location[2]});
  LidarBox b;
  b.x = bottom[0];
  b.y = bottom[1];
  b.z = bottom[2];
  b.h = o.dimensions[0];
  b.w = o.dimensions[1];
  b.l = o.dimensions[2];
  b.yaw = wrap_angle(-o.rotation_y - std::numbers::pi / 2);
  return b;
}

KittiObject kitti_object_from_lidar_box(const LidarBox& b, const KittiCalib& calib,
                                        const std::string& type) {
  KittiObject o;
  o.type = type;
  const Vec3 loc = calib.lidar_to_camera({b.x, b.y, b.z});
  o.location = {loc[0], loc[1], loc[2]};
  o.dimensions = {b.h, b.w, b.l};
  o.rotation_y = wrap_angle(-b.yaw - std::numbers::pi / 2);
  o.alpha = wrap_angle(o.rotation_y - std::atan2(loc[0], loc[2]));
  double left = 1e18, top = 1e18, right = -1e18, bottom = -1e18;
  bool behind = false;
  for (const auto& corner : box_corners(b)) {
    const auto uvz = calib.project_to_image(calib.lidar_to_camera(corner));
    if (uvz[2] <= 0.1) behind = true;
    left = std::min(left, uvz[0]);
    right = std::max(right, uvz[0]);
    top = std::min(top, uvz[1]);
    bottom = std::max(bottom, uvz[1]);
  }
  const double full_area = std::max(right - left, 0.0) * std::max(bottom - top, 0.0);
  const double cl = std::clamp(left, 0.0, kImageWidth - 1),
               cr = std::clamp(right, 0.0, kImageWidth - 1);
  const double ct = std::clamp(top, 0.0, kImageHeight - 1),
               cb = std::clamp(bottom, 0.0, kImageHeight - 1);
  const double clipped_area = std::max(cr - cl, 0.0) * std::max(cb - ct, 0.0);
  o.bbox = {cl, ct, cr, cb};
  o.truncated =
      behind || full_area <= 0 ? 1.0 : std::clamp(1.0 - clipped_area / full_area, 0.0, 1.0);
  return o;
}

}  // namespace ddp3d::data
