// A bird's-eye view of a lidar frame, as mmdetection3d's visualizer draws it for `--show-dir`:
// the points (coloured by height or intensity), ground-truth and predicted boxes (class and
// score beside each prediction, a line from its centre to its front marking the heading), the
// detection range and a scale bar. Pure drawing on plain data (lines, a bitmap font): no
// tensors and no drawing library, whose Debian packages would bring GL and LLVM into the
// worker images.
#pragma once

#include <array>
#include <limits>
#include <string>
#include <vector>

#include "worker/visual/rgb_image.h"

namespace ddp3d::visual {

// The lidar frame seen from above: x forward is up in the picture, y (left) is to the left.
struct BevView {
  double x_min = 0, x_max = 70.4, y_min = -40, y_max = 40;  // metres
  double pixels_per_metre = 10;

  // The detection range [x_min, y_min, z_min, x_max, y_max, z_max] with `margin` metres
  // around it, so that boxes partly outside still show. Throws std::invalid_argument on a
  // range that is empty, not finite, or over 1000 m, or a scale outside (0, 100].
  static BevView around(const std::array<double, 6>& range, double margin, double pixels_per_metre);
  int width() const;
  int height() const;
  // Pixel coordinates (column, row) of lidar (x, y), not rounded and not clipped.
  std::array<double, 2> to_pixel(double x, double y) const;
};

struct BevPoint {
  float x = 0, y = 0, z = 0, intensity = 0;
};

// A box from above: centre, length along its heading, width, yaw about z from the x axis.
struct BevBox {
  double x = 0, y = 0, length = 0, width = 0, yaw = 0;
  int label = 0;                                            // index into BevScene::class_names
  double score = std::numeric_limits<double>::quiet_NaN();  // predictions only
};

struct BevScene {
  std::vector<BevPoint> points;
  std::vector<BevBox> ground_truth;
  std::vector<BevBox> predictions;
  std::vector<std::string> class_names;
  std::array<double, 6> detection_range{0, -40, -3, 70.4, 40, 1};
  std::string title;  // e.g. the frame id
};

enum class PointColour { kHeight, kIntensity };

struct BevStyle {
  PointColour colour = PointColour::kHeight;
  double z_min = -3, z_max = 1;  // the height colour map's ends
  double score_threshold = 0.1;  // predictions below it are not drawn
};

inline constexpr Rgb kBackground{16, 16, 16};
inline constexpr Rgb kGroundTruthColour{0, 230, 0};
inline constexpr Rgb kRangeColour{120, 120, 120};
inline constexpr Rgb kScaleColour{255, 255, 255};
// Predictions by class: orange, magenta, cyan, then again.
Rgb prediction_colour(int label);
// The colour of a point under `style`: a colour map (dark blue, cyan, green, yellow, red)
// over height or intensity.
Rgb point_colour(const BevPoint& point, const BevStyle& style);

struct BevCounts {
  int points = 0;       // drawn inside the picture
  int predictions = 0;  // drawn (score >= threshold)
  int not_finite = 0;   // points and boxes skipped for a NaN or infinite value
};

RgbImage render_bev(const BevScene& scene, const BevView& view, const BevStyle& style,
                    BevCounts* counts = nullptr);

}  // namespace ddp3d::visual
