#include "worker/eval/box_overlap.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace ddp3d::eval {
namespace {

using Point = std::array<double, 2>;

double cross(const Point& o, const Point& a, const Point& b) {
  return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
}

double polygon_area(const std::vector<Point>& poly) {
  double twice = 0;
  for (std::size_t i = 0; i < poly.size(); ++i) {
    const Point& p = poly[i];
    const Point& q = poly[(i + 1) % poly.size()];
    twice += p[0] * q[1] - q[0] * p[1];
  }
  return std::abs(twice) / 2;
}

bool degenerate(const GroundRect& r) {
  return !(r.length > 0) || !(r.width > 0);
}

}  // namespace

std::array<Point, 4> ground_rect_corners(const GroundRect& rect) {
  const double c = std::cos(rect.rotation_y);
  const double s = std::sin(rect.rotation_y);
  const Point along{c * rect.length / 2, -s * rect.length / 2};
  const Point across{s * rect.width / 2, c * rect.width / 2};
  // Signed-area orientation of (along, across) is c*c + s*s > 0 → this order is
  // counter-clockwise in a right-handed (x, z) plane.
  std::array<Point, 4> corners;
  const double sx[4] = {-1, 1, 1, -1};
  const double sy[4] = {-1, -1, 1, 1};
  for (int i = 0; i < 4; ++i) {
    corners[i] = {rect.x + sx[i] * along[0] + sy[i] * across[0],
                  rect.z + sx[i] * along[1] + sy[i] * across[1]};
  }
  return corners;
}

double ground_intersection_area(const GroundRect& a, const GroundRect& b) {
  if (degenerate(a) || degenerate(b)) return 0;
  const auto ca = ground_rect_corners(a);
  const auto cb = ground_rect_corners(b);
  // Sutherland–Hodgman: clip a's polygon by each edge (half-plane) of the convex, CCW b.
  std::vector<Point> poly(ca.begin(), ca.end());
  for (int e = 0; e < 4 && !poly.empty(); ++e) {
    const Point& p0 = cb[e];
    const Point& p1 = cb[(e + 1) % 4];
    std::vector<Point> next;
    next.reserve(poly.size() + 2);
    for (std::size_t i = 0; i < poly.size(); ++i) {
      const Point& cur = poly[i];
      const Point& nxt = poly[(i + 1) % poly.size()];
      const double dc = cross(p0, p1, cur);
      const double dn = cross(p0, p1, nxt);
      if (dc >= 0) next.push_back(cur);
      if ((dc >= 0) != (dn >= 0)) {
        const double t = dc / (dc - dn);
        next.push_back({cur[0] + t * (nxt[0] - cur[0]), cur[1] + t * (nxt[1] - cur[1])});
      }
    }
    poly = std::move(next);
  }
  return poly.size() < 3 ? 0 : polygon_area(poly);
}

double image_box_overlap(const ImageBox& a, const ImageBox& b, OverlapNorm norm) {
  const double iw = std::min(a[2], b[2]) - std::max(a[0], b[0]);
  if (!(iw > 0)) return 0;
  const double ih = std::min(a[3], b[3]) - std::max(a[1], b[1]);
  if (!(ih > 0)) return 0;
  const double inter = iw * ih;
  const double area_a = (a[2] - a[0]) * (a[3] - a[1]);
  if (norm == OverlapNorm::kFirst) return inter / area_a;
  const double area_b = (b[2] - b[0]) * (b[3] - b[1]);
  return inter / (area_a + area_b - inter);
}

double bev_iou(const GroundRect& a, const GroundRect& b) {
  const double inter = ground_intersection_area(a, b);
  if (!(inter > 0)) return 0;
  return inter / (a.length * a.width + b.length * b.width - inter);
}

double box3d_iou(const CameraBox3d& a, const CameraBox3d& b) {
  const double ground = ground_intersection_area(a.ground, b.ground);
  if (!(ground > 0)) return 0;
  const double vertical = std::min(a.y, b.y) - std::max(a.y - a.height, b.y - b.height);
  if (!(vertical > 0)) return 0;
  const double inter = ground * vertical;
  const double vol_a = a.ground.length * a.ground.width * a.height;
  const double vol_b = b.ground.length * b.ground.width * b.height;
  return inter / (vol_a + vol_b - inter);
}

}  // namespace ddp3d::eval
