// Exact overlaps between KITTI boxes, as the KITTI devkit / mmdet3d's kitti_eval measure them:
// axis-aligned image boxes, rotated rectangles in the camera's ground plane (x-z), and 3D
// boxes = ground-plane rectangle × vertical extent. All in double precision.
#pragma once

#include <array>

namespace ddp3d::eval {

// Image box (left, top, right, bottom) in pixels.
using ImageBox = std::array<double, 4>;

// A rectangle in the camera frame's ground plane (x right, z forward). `length` runs along
// the object's heading (cos ry, -sin ry) — the direction rotation_y turns the camera x axis
// to about the downward y axis — and `width` across it (sin ry, cos ry).
struct GroundRect {
  double x = 0;
  double z = 0;
  double length = 0;
  double width = 0;
  double rotation_y = 0;
};

// A KITTI 3D box in the camera frame: `y` is the bottom face (camera y points down), so the
// box spans y - height .. y vertically.
struct CameraBox3d {
  GroundRect ground;
  double y = 0;
  double height = 0;
};

// How an overlap is normalised (the devkit's `criterion`).
enum class OverlapNorm {
  kUnion,  // intersection / union (IoU)
  kFirst,  // intersection / area of the first box (used for detections vs. DontCare)
};

// Corners of `rect`, counter-clockwise in the (x, z) plane.
std::array<std::array<double, 2>, 4> ground_rect_corners(const GroundRect& rect);

// Area of the intersection of two rotated rectangles (convex polygon clipping).
// Degenerate rectangles (non-positive length or width) intersect nothing.
double ground_intersection_area(const GroundRect& a, const GroundRect& b);

// Image-box overlap without the devkit's legacy "+1 pixel" (as mmdet3d): 0 when disjoint.
double image_box_overlap(const ImageBox& a, const ImageBox& b,
                         OverlapNorm norm = OverlapNorm::kUnion);

// Bird's-eye-view IoU of two rotated ground rectangles.
double bev_iou(const GroundRect& a, const GroundRect& b);

// 3D IoU: ground intersection × vertical overlap / union volume.
double box3d_iou(const CameraBox3d& a, const CameraBox3d& b);

}  // namespace ddp3d::eval
