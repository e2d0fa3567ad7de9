#include "worker/visual/bev_render.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "worker/visual/bitmap_font.h"

namespace ddp3d::visual {

namespace {

constexpr int kMaxSide = 8192;  // pixels: a 1000 m range at 8 px/m

struct Pixel {
  double col = 0, row = 0;
};

Pixel pixel(const BevView& view, double x, double y) {
  const auto p = view.to_pixel(x, y);
  return {p[0], p[1]};
}

void put(RgbImage& image, long col, long row, const Rgb& c) {
  if (col < 0 || row < 0 || col >= image.width || row >= image.height) return;
  auto* dst = &image.pixels[(static_cast<std::size_t>(row) * static_cast<std::size_t>(image.width) +
                             static_cast<std::size_t>(col)) *
                            3];
  dst[0] = c[0];
  dst[1] = c[1];
  dst[2] = c[2];
}

// Clips the segment to the picture grown by `pad` pixels (Liang-Barsky), so that a box a
// kilometre away costs no more steps than one inside. False when nothing of it is left.
bool clip(Pixel& a, Pixel& b, double width, double height, double pad) {
  double t0 = 0, t1 = 1;
  const double dx = b.col - a.col, dy = b.row - a.row;
  const double p[4] = {-dx, dx, -dy, dy};
  const double q[4] = {a.col + pad, width + pad - a.col, a.row + pad, height + pad - a.row};
  for (int i = 0; i < 4; ++i) {
    if (p[i] == 0) {
      if (q[i] < 0) return false;
      continue;
    }
    const double t = q[i] / p[i];
    if (p[i] < 0) {
      t0 = std::max(t0, t);
    } else {
      t1 = std::min(t1, t);
    }
    if (t0 > t1) return false;
  }
  b = {a.col + t1 * dx, a.row + t1 * dy};
  a = {a.col + t0 * dx, a.row + t0 * dy};
  return true;
}

// A straight line (Bresenham) drawn with a `thickness` x `thickness` square brush whose top-left
// pixel is the line's own.
void line(RgbImage& image, Pixel a, Pixel b, const Rgb& c, int thickness) {
  if (!clip(a, b, image.width, image.height, thickness + 1)) return;
  long x0 = std::lround(a.col), y0 = std::lround(a.row);
  const long x1 = std::lround(b.col), y1 = std::lround(b.row);
  const long dx = std::labs(x1 - x0), dy = -std::labs(y1 - y0);
  const long sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1;
  long err = dx + dy;
  while (true) {
    for (int i = 0; i < thickness; ++i)
      for (int j = 0; j < thickness; ++j) put(image, x0 + i, y0 + j, c);
    if (x0 == x1 && y0 == y1) break;
    const long e2 = 2 * err;
    if (e2 >= dy) {
      err += dy;
      x0 += sx;
    }
    if (e2 <= dx) {
      err += dx;
      y0 += sy;
    }
  }
}

// `s` in the bitmap font with its baseline-left corner at (col, row).
void text(RgbImage& image, const std::string& s, long col, long row, const Rgb& c) {
  for (const char ch : s) {
    const auto rows = glyph(ch);
    for (int r = 0; r < kGlyphHeight; ++r)
      for (int k = 0; k < kGlyphWidth; ++k)
        if ((rows[static_cast<std::size_t>(r)] >> (kGlyphWidth - 1 - k)) & 1)
          put(image, col + k, row - kGlyphHeight + r, c);
    col += kGlyphAdvance;
  }
}

bool finite_box(const BevBox& b) {
  return std::isfinite(b.x) && std::isfinite(b.y) && std::isfinite(b.length) &&
         std::isfinite(b.width) && std::isfinite(b.yaw);
}

// Dark blue through cyan, green and yellow to red, linear between these stops.
const std::array<Rgb, 256>& colour_map() {
  static const std::array<Rgb, 256> table = [] {
    constexpr std::array<std::array<double, 3>, 5> kStops{
        {{48, 18, 120}, {40, 130, 240}, {30, 220, 160}, {240, 210, 40}, {210, 30, 20}}};
    std::array<Rgb, 256> out{};
    for (int i = 0; i < 256; ++i) {
      const double t = i / 255.0 * (kStops.size() - 1);
      const auto k = std::min<std::size_t>(static_cast<std::size_t>(t), kStops.size() - 2);
      const double f = t - static_cast<double>(k);
      Rgb c{};
      for (std::size_t ch = 0; ch < 3; ++ch) {
        c[ch] = static_cast<std::uint8_t>(
            std::lround(kStops[k][ch] + f * (kStops[k + 1][ch] - kStops[k][ch])));
      }
      out[static_cast<std::size_t>(i)] = c;
    }
    return out;
  }();
  return table;
}

void draw_box(RgbImage& image, const BevView& view, const BevBox& b, const Rgb& colour,
              int thickness) {
  const double fx = std::cos(b.yaw), fy = std::sin(b.yaw);  // forward
  const double lx = -fy, ly = fx;                           // left
  const double hl = b.length / 2, hw = b.width / 2;
  const std::array<Pixel, 4> corners{pixel(view, b.x + fx * hl + lx * hw, b.y + fy * hl + ly * hw),
                                     pixel(view, b.x + fx * hl - lx * hw, b.y + fy * hl - ly * hw),
                                     pixel(view, b.x - fx * hl - lx * hw, b.y - fy * hl - ly * hw),
                                     pixel(view, b.x - fx * hl + lx * hw, b.y - fy * hl + ly * hw)};
  for (std::size_t i = 0; i < 4; ++i)
    line(image, corners[i], corners[(i + 1) % 4], colour, thickness);
  line(image, pixel(view, b.x, b.y), pixel(view, b.x + fx * hl, b.y + fy * hl), colour, thickness);
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
  return colour_map()[static_cast<std::size_t>(std::lround(t * 255))];
}

RgbImage render_bev(const BevScene& scene, const BevView& view, const BevStyle& style,
                    BevCounts* counts) {
  BevCounts n;
  RgbImage image(view.width(), view.height(), kBackground);

  for (const BevPoint& p : scene.points) {
    if (!std::isfinite(p.x) || !std::isfinite(p.y) || !std::isfinite(p.z)) {
      ++n.not_finite;
      continue;
    }
    const auto px = view.to_pixel(p.x, p.y);
    const long col = std::lround(px[0]), row = std::lround(px[1]);
    if (col < 0 || row < 0 || col >= image.width || row >= image.height) continue;
    put(image, col, row, point_colour(p, style));
    ++n.points;
  }

  const auto& r = scene.detection_range;
  const Pixel far_left = pixel(view, r[3], r[4]), near_right = pixel(view, r[0], r[1]);
  const Pixel far_right{near_right.col, far_left.row}, near_left{far_left.col, near_right.row};
  line(image, far_left, far_right, kRangeColour, 1);
  line(image, far_right, near_right, kRangeColour, 1);
  line(image, near_right, near_left, kRangeColour, 1);
  line(image, near_left, far_left, kRangeColour, 1);

  for (const BevBox& b : scene.ground_truth) {
    if (!finite_box(b)) {
      ++n.not_finite;
      continue;
    }
    draw_box(image, view, b, kGroundTruthColour, 2);
  }
  for (const BevBox& b : scene.predictions) {
    if (!finite_box(b) || std::isnan(b.score)) {
      ++n.not_finite;
      continue;
    }
    if (b.score < style.score_threshold) continue;
    const Rgb colour = prediction_colour(b.label);
    draw_box(image, view, b, colour, 1);
    const std::string name =
        b.label >= 0 && static_cast<std::size_t>(b.label) < scene.class_names.size()
            ? scene.class_names[static_cast<std::size_t>(b.label)]
            : "class " + std::to_string(b.label);
    char score[32];
    std::snprintf(score, sizeof score, " %.2f", b.score);
    const Pixel at = pixel(view, b.x, b.y);
    if (std::abs(at.col) < 1e6 && std::abs(at.row) < 1e6) {
      text(image, name + score, std::lround(at.col) + 6, std::lround(at.row) - 6, colour);
    }
    ++n.predictions;
  }

  // A scale bar (10 m, or 1 m when 10 m would take over half the width) in the bottom-left
  // corner, and the title.
  const double metres = image.width >= 20 * view.pixels_per_metre ? 10 : 1;
  const double len = std::round(metres * view.pixels_per_metre);
  const double bottom = image.height - 10;
  line(image, {10, bottom}, {10 + len, bottom}, kScaleColour, 2);
  line(image, {10, bottom - 4}, {10, bottom + 4}, kScaleColour, 1);
  line(image, {10 + len, bottom - 4}, {10 + len, bottom + 4}, kScaleColour, 1);
  text(image, std::to_string(static_cast<int>(metres)) + " m", 10, image.height - 18, kScaleColour);
  if (!scene.title.empty()) text(image, scene.title, 8, 14, kScaleColour);

  if (counts) *counts = n;
  return image;
}

}  // namespace ddp3d::visual
