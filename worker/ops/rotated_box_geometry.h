// Exact geometry of rotated rectangles in the bird's-eye view, shared by the CPU ops and the
// CUDA kernels (every function is host/device when compiled by nvcc).
//
// A BEV box is (x, y, dx, dy, yaw): centre, extent along its own x axis (the heading), extent
// along its own y axis, and the counter-clockwise rotation of that heading from the +x axis —
// mmdet3d's LiDAR convention. The intersection of two boxes is found by clipping one box's
// polygon by the four edges of the other (Sutherland–Hodgman, exact for convex polygons) and
// taking the shoelace area.
#pragma once

#include <cmath>

#if defined(__CUDACC__)
#define DDP3D_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define DDP3D_HOST_DEVICE inline
#endif

namespace ddp3d::ops::geometry {

template <typename T>
struct Point {
  T x;
  T y;
};

// Clipping a convex quadrilateral by four half-planes adds at most one vertex per plane.
constexpr int kMaxClippedVertices = 16;

// The four corners of a box, counter-clockwise.
template <typename T>
DDP3D_HOST_DEVICE void box_corners(const T* box, Point<T>* corners) {
  using std::cos;
  using std::sin;
  const T c = cos(box[4]);
  const T s = sin(box[4]);
  const T hx = box[2] / T(2);
  const T hy = box[3] / T(2);
  const T local_x[4] = {hx, -hx, -hx, hx};
  const T local_y[4] = {hy, hy, -hy, -hy};
  for (int i = 0; i < 4; ++i) {
    corners[i].x = box[0] + local_x[i] * c - local_y[i] * s;
    corners[i].y = box[1] + local_x[i] * s + local_y[i] * c;
  }
}

// Signed area of the parallelogram (b - a) × (p - a): > 0 when p is left of a→b.
template <typename T>
DDP3D_HOST_DEVICE T cross(const Point<T>& a, const Point<T>& b, const Point<T>& p) {
  return (b.x - a.x) * (p.y - a.y) - (b.y - a.y) * (p.x - a.x);
}

// Keeps the part of polygon `in` (n vertices) left of the directed edge a→b; returns the
// vertex count written to `out`.
template <typename T>
DDP3D_HOST_DEVICE int clip_by_edge(const Point<T>* in, int n, const Point<T>& a, const Point<T>& b,
                                   Point<T>* out) {
  int m = 0;
  for (int i = 0; i < n; ++i) {
    const Point<T>& cur = in[i];
    const Point<T>& nxt = in[(i + 1) % n];
    const T d_cur = cross(a, b, cur);
    const T d_nxt = cross(a, b, nxt);
    if (d_cur >= T(0)) out[m++] = cur;
    // The edge cur→nxt crosses the clip line strictly: add the crossing point.
    if ((d_cur > T(0) && d_nxt < T(0)) || (d_cur < T(0) && d_nxt > T(0))) {
      const T t = d_cur / (d_cur - d_nxt);
      out[m].x = cur.x + t * (nxt.x - cur.x);
      out[m].y = cur.y + t * (nxt.y - cur.y);
      ++m;
    }
  }
  return m;
}

template <typename T>
DDP3D_HOST_DEVICE T polygon_area(const Point<T>* p, int n) {
  using std::fabs;
  T twice = T(0);
  for (int i = 0; i < n; ++i) {
    const Point<T>& a = p[i];
    const Point<T>& b = p[(i + 1) % n];
    twice += a.x * b.y - b.x * a.y;
  }
  return fabs(twice) / T(2);
}

// Area of the intersection of two BEV boxes.
template <typename T>
DDP3D_HOST_DEVICE T rotated_box_intersection(const T* a, const T* b) {
  using std::sqrt;
  // Disjoint circumscribed circles: no overlap (cheap early exit, common in dense sets).
  const T ra = sqrt(a[2] * a[2] + a[3] * a[3]) / T(2);
  const T rb = sqrt(b[2] * b[2] + b[3] * b[3]) / T(2);
  const T ddx = a[0] - b[0];
  const T ddy = a[1] - b[1];
  if (ddx * ddx + ddy * ddy > (ra + rb) * (ra + rb)) return T(0);

  Point<T> clip[4];
  Point<T> buf_a[kMaxClippedVertices];
  Point<T> buf_b[kMaxClippedVertices];
  box_corners(b, clip);
  box_corners(a, buf_a);
  int n = 4;
  Point<T>* src = buf_a;
  Point<T>* dst = buf_b;
  for (int e = 0; e < 4 && n > 0; ++e) {
    n = clip_by_edge(src, n, clip[e], clip[(e + 1) % 4], dst);
    Point<T>* tmp = src;
    src = dst;
    dst = tmp;
  }
  return n < 3 ? T(0) : polygon_area(src, n);
}

// Union below this is treated as this (degenerate, zero-area boxes give IoU 0, not NaN).
template <typename T>
DDP3D_HOST_DEVICE T iou_eps() {
  return T(1e-6);
}

template <typename T>
DDP3D_HOST_DEVICE T rotated_box_iou(const T* a, const T* b) {
  const T inter = rotated_box_intersection(a, b);
  const T uni = a[2] * a[3] + b[2] * b[3] - inter;
  return inter / (uni > iou_eps<T>() ? uni : iou_eps<T>());
}

// 3D IoU of LiDAR boxes (x, y, z_bottom, dx, dy, dz, yaw): BEV overlap × height overlap.
template <typename T>
DDP3D_HOST_DEVICE T box3d_iou(const T* a, const T* b) {
  using std::fmax;
  using std::fmin;
  const T bev_a[5] = {a[0], a[1], a[3], a[4], a[6]};
  const T bev_b[5] = {b[0], b[1], b[3], b[4], b[6]};
  const T top = fmin(a[2] + a[5], b[2] + b[5]);
  const T bottom = fmax(a[2], b[2]);
  const T height = top - bottom;
  if (height <= T(0)) return T(0);
  const T inter = rotated_box_intersection(bev_a, bev_b) * height;
  const T uni = a[3] * a[4] * a[5] + b[3] * b[4] * b[5] - inter;
  return inter / (uni > iou_eps<T>() ? uni : iou_eps<T>());
}

}  // namespace ddp3d::ops::geometry
