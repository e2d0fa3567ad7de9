// Turning a predicted 3D box (camera frame) into the KITTI result fields the 2D and AOS
// metrics need, as mmdet3d's KittiMetric does: the image box is the bounding rectangle of the
// 8 projected corners, kept only if it reaches into the image and then clipped to it; alpha is
// the observation angle.
#pragma once

#include <array>
#include <optional>

#include "worker/eval/box_overlap.h"

namespace ddp3d::eval {

// Row-major 3x4 camera projection (KITTI calib's P2).
using Projection = std::array<std::array<double, 4>, 3>;

// Corners of a KITTI box: location = bottom centre (x, y, z), dimensions = (h, w, l).
std::array<std::array<double, 3>, 8> camera_box_corners(const std::array<double, 3>& location,
                                                        const std::array<double, 3>& dimensions,
                                                        double rotation_y);

// The clipped 2D box of a camera-frame 3D box in an image of width × height pixels; nullopt
// when its projection lies entirely outside the image (mmdet3d drops such predictions).
std::optional<ImageBox> project_box_to_image(const std::array<double, 3>& location,
                                             const std::array<double, 3>& dimensions,
                                             double rotation_y, const Projection& p2,
                                             double image_width, double image_height);

// Observation angle alpha = rotation_y - atan2(x, z) of an object at camera (x, z).
double observation_alpha(double x, double z, double rotation_y);

}  // namespace ddp3d::eval
