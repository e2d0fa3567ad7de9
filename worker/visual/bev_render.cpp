#include "worker/visual/bev_render.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#include <stdexcept>

namespace ddp3d::visual {

namespace {

constexpr int kMaxSide = 8192;  // pixels: a 1000 m range at 8 px/m

cv::Scalar scalar(const Rgb& c) {
  return {double(c[0]), double(c[1]), double(c[2])};
}

// OpenCV takes int coordinates: far-off boxes are clamped (lines to them are still clipped to
// the picture by OpenCV), never cast from a value int cannot hold.
cv::Point pixel(const BevView& view, double x, double y) {
  const auto p = view.to_pixel(x, y);
  auto clamp = [](double v) { return static_cast<int>(std::lround(std::clamp(v, -1e6, 1e6))); };
  return {clamp(p[0]), clamp(p[1])};
}

bool finite_box(const BevBox& b) {
  return std::isfinite(b.x) && std::isfinite(b.y) && std::isfinite(b.length) &&
         std::isfinite(b.width) && std::isfinite(b.yaw);
}

// Turbo, from OpenCV's own colour map, as RGB by level.
const std::array<Rgb, 256>& turbo() {
  static const std::array<Rgb, 256> table = [] {
    cv::Mat ramp(1, 256, CV_8UC1);
    for (int i = 0; i < 256; ++i) ramp.at<std::uint8_t>(0, i) = static_cast<std::uint8_t>(i);
    cv::Mat bgr;
    cv::applyColorMap(ramp, bgr, cv::COLORMAP_TURBO);
    std::array<Rgb, 256> out{};
    for (int i = 0; i < 256; ++i) {
      const auto& v = bgr.at<cv::Vec3b>(0, i);
      out[static_cast<std::size_t>(i)] = {v[2], v[1], v[0]};
    }
    return out;
  }();
  return table;
}

void draw_box(cv::Mat& canvas, const BevView& view, const BevBox& b, const Rgb& colour,
              int thickness) {
  const double fx = std::cos(b.yaw), fy = std::sin(b.yaw);  // forward
  const double lx = -fy, ly = fx;                           // left
  const double hl = b.length / 2, hw = b.width / 2;
  const std::array<cv::Point, 4> corners{
      pixel(view, b.x + fx * hl + lx * hw, b.y + fy * hl + ly * hw),
      pixel(view, b.x + fx * hl - lx * hw, b.y + fy * hl - ly * hw),
      pixel(view, b.x - fx * hl - lx * hw, b.y - fy * hl - ly * hw),
      pixel(view, b.x - fx * hl + lx * hw, b.y - fy * hl + ly * hw)};
  for (std::size_t i = 0; i < 4; ++i) {
    cv::line(canvas, corners[i], corners[(i + 1) % 4], scalar(colour), thickness, cv::LINE_8);
  }
  cv::line(canvas, pixel(view, b.x, b.y), pixel(view, b.x + fx * hl, b.y + fy * hl), scalar(colour),
           thickness, cv::LINE_8);
}

void text(cv::Mat& canvas, const std::string& s, cv::Point at, const Rgb& colour) {
  cv::putText(canvas, s, at, cv::FONT_HERSHEY_SIMPLEX, 0.4, scalar(colour), 1, cv::LINE_AA);
}

}  // namespace

BevView BevView::around(const std::array<double, 6>& range, double margin, double ppm) {
  for (double v : range) {
    if (!std::isfinite(v)) throw std::invalid_argument("detection range: a value is not finite");
  }
  if (!(range[3] > range[0]) || !(range[4] > range[1])) {
    throw std::invalid_argument("detection range: x_max must exceed x_min and y_max y_min");
  }
  if (range[3] - range[0] > 1000 || range[4] - range[1] > 1000) {
    throw std::invalid_argument("detection range: over 1000 m across");
  }
  if (!(margin >= 0 && margin <= 100)) throw std::invalid_argument("margin: not in [0, 100] m");
  if (!(ppm > 0 && ppm <= 100)) throw std::invalid_argument("pixels per metre: not in (0, 100]");
  BevView v;
  v.x_min = range[0] - margin;
  v.x_max = range[3] + margin;
  v.y_min = range[1] - margin;
  v.y_max = range[4] + margin;
  v.pixels_per_metre = ppm;
  if (v.width() > kMaxSide || v.height() > kMaxSide) {
    throw std::invalid_argument("picture of " + std::to_string(v.width()) + "x" +
                                std::to_string(v.height()) + " pixels: over " +
                                std::to_string(kMaxSide) + " a side (fewer pixels per metre)");
  }
  return v;
}

int BevView::width() const {
  return static_cast<int>(std::ceil((y_max - y_min) * pixels_per_metre));
}
int BevView::height() const {
  return static_cast<int>(std::ceil((x_max - x_min) * pixels_per_metre));
}

std::array<double, 2> BevView::to_pixel(double x, double y) const {
  return {(y_max - y) * pixels_per_metre, (x_max - x) * pixels_per_metre};
}

Rgb prediction_colour(int label) {
  static constexpr std::array<Rgb, 3> kColours{Rgb{255, 150, 0}, Rgb{255, 60, 220},
                                               Rgb{0, 200, 255}};
  const int n = static_cast<int>(kColours.size());
  return kColours[static_cast<std::size_t>(((label % n) + n) % n)];
}

Rgb point_colour(const BevPoint& p, const BevStyle& style) {
  double t = 0;
  if (style.colour == PointColour::kHeight) {
    const double span = style.z_max - style.z_min;
    t = span > 0 ? (p.z - style.z_min) / span : 0.5;
  } else {
    t = p.intensity;  // KITTI intensities are reflectances in [0, 1]
  }
  t = std::isfinite(t) ? std::clamp(t, 0.0, 1.0) : 0.0;
  return turbo()[static_cast<std::size_t>(std::lround(t * 255))];
}

RgbImage render_bev(const BevScene& scene, const BevView& view, const BevStyle& style,
                    BevCounts* counts) {
  BevCounts n;
  RgbImage image(view.width(), view.height(), kBackground);
  cv::Mat canvas(image.height, image.width, CV_8UC3, image.pixels.data());

  for (const BevPoint& p : scene.points) {
    if (!std::isfinite(p.x) || !std::isfinite(p.y) || !std::isfinite(p.z)) {
      ++n.not_finite;
      continue;
    }
    const auto px = view.to_pixel(p.x, p.y);
    const long col = std::lround(px[0]), row = std::lround(px[1]);
    if (col < 0 || row < 0 || col >= image.width || row >= image.height) continue;
    const Rgb c = point_colour(p, style);
    auto* dst = &image.pixels[(static_cast<std::size_t>(row) * image.width + col) * 3];
    dst[0] = c[0];
    dst[1] = c[1];
    dst[2] = c[2];
    ++n.points;
  }

  const auto& r = scene.detection_range;
  cv::rectangle(canvas, pixel(view, r[3], r[4]), pixel(view, r[0], r[1]), scalar(kRangeColour), 1,
                cv::LINE_8);

  for (const BevBox& b : scene.ground_truth) {
    if (!finite_box(b)) {
      ++n.not_finite;
      continue;
    }
    draw_box(canvas, view, b, kGroundTruthColour, 2);
  }
  for (const BevBox& b : scene.predictions) {
    if (!finite_box(b) || std::isnan(b.score)) {
      ++n.not_finite;
      continue;
    }
    if (b.score < style.score_threshold) continue;
    const Rgb colour = prediction_colour(b.label);
    draw_box(canvas, view, b, colour, 1);
    const std::string name =
        b.label >= 0 && static_cast<std::size_t>(b.label) < scene.class_names.size()
            ? scene.class_names[static_cast<std::size_t>(b.label)]
            : "class " + std::to_string(b.label);
    char score[32];
    std::snprintf(score, sizeof score, " %.2f", b.score);
    cv::Point at = pixel(view, b.x, b.y);
    at.x += 6;
    at.y -= 6;
    text(canvas, name + score, at, colour);
    ++n.predictions;
  }

  // A scale bar (10 m, or 1 m when 10 m would take over half the width) in the bottom-left
  // corner, and the title.
  const double metres = image.width >= 20 * view.pixels_per_metre ? 10 : 1;
  const int len = static_cast<int>(std::lround(metres * view.pixels_per_metre));
  const cv::Point a{10, image.height - 10}, b{10 + len, image.height - 10};
  cv::line(canvas, a, b, scalar(kScaleColour), 2, cv::LINE_8);
  cv::line(canvas, a - cv::Point(0, 4), a + cv::Point(0, 4), scalar(kScaleColour), 1);
  cv::line(canvas, b - cv::Point(0, 4), b + cv::Point(0, 4), scalar(kScaleColour), 1);
  text(canvas, std::to_string(static_cast<int>(metres)) + " m", a + cv::Point(0, -10),
       kScaleColour);
  if (!scene.title.empty()) text(canvas, scene.title, {8, 16}, kScaleColour);

  if (counts) *counts = n;
  return image;
}

}  // namespace ddp3d::visual
