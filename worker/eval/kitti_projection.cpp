#include "worker/eval/kitti_projection.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ddp3d::eval {

std::array<std::array<double, 3>, 8> camera_box_corners(const std::array<double, 3>& location,
                                                        const std::array<double, 3>& dimensions,
                                                        double rotation_y) {
  const GroundRect ground{location[0], location[2], dimensions[2], dimensions[1], rotation_y};
  const auto footprint = ground_rect_corners(ground);
  std::array<std::array<double, 3>, 8> corners;
  for (int i = 0; i < 4; ++i) {
    // Camera y points down: the bottom face is at y, the top at y - height.
    corners[i] = {footprint[i][0], location[1], footprint[i][1]};
    corners[i + 4] = {footprint[i][0], location[1] - dimensions[0], footprint[i][1]};
  }
  return corners;
}

std::optional<ImageBox> project_box_to_image(const std::array<double, 3>& location,
                                             const std::array<double, 3>& dimensions,
                                             double rotation_y, const Projection& p2,
                                             double image_width, double image_height) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  ImageBox box{kInf, kInf, -kInf, -kInf};
  for (const auto& c : camera_box_corners(location, dimensions, rotation_y)) {
    double h[3];
    for (int r = 0; r < 3; ++r) {
      h[r] = p2[r][0] * c[0] + p2[r][1] * c[1] + p2[r][2] * c[2] + p2[r][3];
    }
    const double u = h[0] / h[2];
    const double v = h[1] / h[2];
    box[0] = std::min(box[0], u);
    box[1] = std::min(box[1], v);
    box[2] = std::max(box[2], u);
    box[3] = std::max(box[3], v);
  }
  const bool in_image = box[0] < image_width && box[1] < image_height && box[2] > 0 && box[3] > 0;
  if (!in_image) return std::nullopt;
  box[0] = std::max(box[0], 0.0);
  box[1] = std::max(box[1], 0.0);
  box[2] = std::min(box[2], image_width);
  box[3] = std::min(box[3], image_height);
  return box;
}

double observation_alpha(double x, double z, double rotation_y) {
  return -std::atan2(x, z) + rotation_y;
}

}  // namespace ddp3d::eval
