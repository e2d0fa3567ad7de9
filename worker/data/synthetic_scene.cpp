#include "worker/data/synthetic_scene.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <random>

namespace ddp3d::data {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kDeg = std::numbers::pi / 180.0;

// An axis-aligned box in its object's frame (origin at the object's bottom centre).
struct Part {
  double cx, cy, cz;  // centre
  double hx, hy, hz;  // half sizes
  double reflectance;
};

struct Body {
  LidarBox box;  // placement (x, y, z, yaw); l/w/h are the label's sizes
  std::vector<Part> parts;
  int label = -1;  // index into the labelled objects, -1 for clutter
};

// Distance along the ray to the nearest part of the body, or infinity.
double intersect(const Body& body, const Vec3& dir, double* reflectance) {
  const double c = std::cos(body.box.yaw), s = std::sin(body.box.yaw);
  // Ray origin (the sensor, at 0) and direction in the body's frame.
  const double ox = -(c * body.box.x + s * body.box.y);
  const double oy = -(-s * body.box.x + c * body.box.y);
  const double oz = -body.box.z;
  const double dx = c * dir[0] + s * dir[1], dy = -s * dir[0] + c * dir[1], dz = dir[2];
  double best = kInf;
  for (const auto& p : body.parts) {
    double t0 = 0.0, t1 = kInf;
    const double o[3] = {ox - p.cx, oy - p.cy, oz - p.cz};
    const double d[3] = {dx, dy, dz};
    const double h[3] = {p.hx, p.hy, p.hz};
    bool miss = false;
    for (int a = 0; a < 3 && !miss; ++a) {
      if (std::abs(d[a]) < 1e-12) {
        miss = std::abs(o[a]) > h[a];
        continue;
      }
      double ta = (-h[a] - o[a]) / d[a], tb = (h[a] - o[a]) / d[a];
      if (ta > tb) std::swap(ta, tb);
      t0 = std::max(t0, ta);
      t1 = std::min(t1, tb);
      miss = t0 > t1;
    }
    if (!miss && t0 > 0 && t0 < best) {
      best = t0;
      *reflectance = p.reflectance;
    }
  }
  return best;
}

std::vector<Part> car_parts(double l, double w, double h, double refl) {
  // Lower body over the full footprint, a shorter cabin on top.
  const double body_h = 0.55 * h;
  return {
      {0, 0, body_h / 2, l / 2, w / 2, body_h / 2, refl},
      {-0.08 * l, 0, body_h + (h - body_h) / 2, 0.27 * l, 0.45 * w, (h - body_h) / 2, refl * 0.6}};
}

std::vector<Part> pedestrian_parts(double l, double w, double h, double refl) {
  return {{0, 0, 0.45 * h / 2, 0.25 * l, 0.3 * w, 0.45 * h / 2, refl},
          {0, 0, 0.45 * h + 0.55 * h / 2, 0.3 * l, 0.45 * w, 0.55 * h / 2, refl}};
}

std::vector<Part> cyclist_parts(double l, double w, double h, double refl) {
  return {{0, 0, 0.3 * h, l / 2, 0.12 * w, 0.3 * h, refl},
          {-0.1 * l, 0, 0.6 * h + 0.2 * h, 0.15 * l, 0.4 * w, 0.2 * h, refl}};
}

struct ObjectKind {
  const char* type;
  double l, w, h;     // mean sizes (KITTI statistics)
  double sl, sw, sh;  // size spread (1 sigma)
  std::vector<Part> (*parts)(double, double, double, double);
};

const ObjectKind kCar{"Car", 3.88, 1.63, 1.53, 0.35, 0.09, 0.12, car_parts};
const ObjectKind kPedestrian{"Pedestrian", 0.84, 0.66, 1.76, 0.12, 0.08, 0.1, pedestrian_parts};
const ObjectKind kCyclist{"Cyclist", 1.76, 0.6, 1.73, 0.15, 0.06, 0.08, cyclist_parts};

}  // namespace

SyntheticScene generate_scene(const SceneOptions& opt, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto uniform = [&](double a, double b) {
    return std::uniform_real_distribution<double>(a, b)(rng);
  };
  auto normal = [&](double m, double s) { return std::normal_distribution<double>(m, s)(rng); };
  auto count = [&](int max_n, int min_n) {
    return std::uniform_int_distribution<int>(min_n, max_n)(rng);
  };
  const double ground_z = -opt.sensor_height;

  std::vector<Body> bodies;
  std::vector<SceneObject> labelled;
  std::vector<std::array<double, 3>> footprints;  // x, y, radius: keeps objects apart
  auto free_at = [&](double x, double y, double r) {
    for (const auto& f : footprints) {
      if (std::hypot(x - f[0], y - f[1]) < r + f[2] + 0.3) return false;
    }
    return true;
  };
  auto place = [&](const ObjectKind& kind) {
    for (int attempt = 0; attempt < 30; ++attempt) {
      const double l = std::max(normal(kind.l, kind.sl), 0.3);
      const double w = std::max(normal(kind.w, kind.sw), 0.3);
      const double h = std::max(normal(kind.h, kind.sh), 0.5);
      const double x = uniform(4.0, opt.max_object_distance);
      const double half_fov = (opt.azimuth_half_fov_deg - 3.0) * kDeg;
      const double y =
          uniform(-1.0, 1.0) * std::min(x * std::tan(half_fov), opt.max_object_lateral);
      const double r = 0.5 * std::hypot(l, w);
      if (!free_at(x, y, r)) continue;
      // Cars mostly follow the road (along x, either way); people and bikes go anywhere.
      double yaw = uniform(-std::numbers::pi, std::numbers::pi);
      if (std::string(kind.type) == "Car" && uniform(0, 1) < 0.7) {
        yaw = (uniform(0, 1) < 0.5 ? 0.0 : std::numbers::pi) + normal(0, 0.15);
      }
      Body body;
      body.box = {x, y, ground_z, l, w, h, wrap_angle(yaw)};
      body.parts = kind.parts(l, w, h, uniform(0.2, 0.9));
      body.label = static_cast<int>(labelled.size());
      bodies.push_back(body);
      labelled.push_back({kind.type, body.box, 0, 0});
      footprints.push_back({x, y, r});
      return;
    }
  };
  for (int i = count(opt.max_cars, 1); i > 0; --i) place(kCar);
  for (int i = count(opt.max_pedestrians, 0); i > 0; --i) place(kPedestrian);
  for (int i = count(opt.max_cyclists, 0); i > 0; --i) place(kCyclist);

  // Clutter: building walls along the road, poles, bushes.
  for (int side : {-1, 1}) {
    if (uniform(0, 1) < 0.7) {
      const double y = side * uniform(12.0, 30.0);
      const double len = uniform(20.0, 60.0);
      const double x = uniform(5.0, 50.0) + len / 2;
      Body wall;
      wall.box = {x, y, ground_z, len, 0.5, 0, normal(0, 0.03)};
      wall.parts = {{0, 0, 3.0, len / 2, 0.25, 3.0, uniform(0.1, 0.5)}};
      bodies.push_back(wall);
    }
  }
  for (int i = count(8, 2); i > 0; --i) {
    const double x = uniform(3.0, 60.0), y = uniform(-1, 1) * std::min(x, 35.0);
    if (!free_at(x, y, 0.3)) continue;
    Body pole;
    pole.box = {x, y, ground_z, 0, 0, 0, 0};
    pole.parts = {{0, 0, 2.0, 0.12, 0.12, 2.0, uniform(0.3, 0.8)}};
    bodies.push_back(pole);
    footprints.push_back({x, y, 0.3});
  }
  for (int i = count(20, 5); i > 0; --i) {
    const double x = uniform(3.0, 60.0), y = uniform(-1, 1) * std::min(x, 35.0);
    const double size = uniform(0.3, 1.2);
    if (!free_at(x, y, size)) continue;
    Body bush;
    bush.box = {x, y, ground_z, 0, 0, 0, uniform(-3, 3)};
    bush.parts = {{0, 0, size * 0.4, size / 2, size * 0.4, size * 0.4, uniform(0.05, 0.3)},
                  {size * 0.2, size * 0.1, size * 0.7, size * 0.3, size * 0.3, size * 0.3,
                   uniform(0.05, 0.3)}};
    bodies.push_back(bush);
    footprints.push_back({x, y, size});
  }

  // Cast the rays.
  SyntheticScene scene;
  std::vector<int> hits(labelled.size(), 0), unblocked(labelled.size(), 0);
  const int columns = static_cast<int>(2 * opt.azimuth_half_fov_deg / opt.azimuth_step_deg);
  scene.points.reserve(static_cast<std::size_t>(opt.beams * columns) * 4);
  std::vector<double> t_of(bodies.size());
  for (int b = 0; b < opt.beams; ++b) {
    const double elev = (opt.elevation_max_deg + (opt.elevation_min_deg - opt.elevation_max_deg) *
                                                     b / std::max(opt.beams - 1, 1)) *
                        kDeg;
    for (int c = 0; c < columns; ++c) {
      const double az = (-opt.azimuth_half_fov_deg + (c + 0.5) * opt.azimuth_step_deg) * kDeg;
      const Vec3 dir{std::cos(elev) * std::cos(az), std::cos(elev) * std::sin(az), std::sin(elev)};
      double best = dir[2] < -1e-6 ? ground_z / dir[2] : kInf;
      double reflectance = 0.15;
      const double ground_t = best;
      int best_body = -1;
      for (std::size_t i = 0; i < bodies.size(); ++i) {
        double refl = 0;
        t_of[i] = intersect(bodies[i], dir, &refl);
        if (t_of[i] < best) {
          best = t_of[i];
          best_body = static_cast<int>(i);
          reflectance = refl;
        }
      }
      for (std::size_t i = 0; i < bodies.size(); ++i) {
        const int label = bodies[i].label;
        if (label >= 0 && t_of[i] < std::min(ground_t, opt.max_range)) ++unblocked[label];
      }
      if (best > opt.max_range || uniform(0, 1) < opt.dropout) continue;
      if (best_body >= 0 && bodies[best_body].label >= 0) ++hits[bodies[best_body].label];
      const double range = best + normal(0, opt.range_noise);
      const bool is_ground = best_body < 0;
      scene.points.push_back(static_cast<float>(dir[0] * range));
      scene.points.push_back(static_cast<float>(dir[1] * range));
      scene.points.push_back(
          static_cast<float>(is_ground ? ground_z + normal(0, 0.02) : dir[2] * range));
      scene.points.push_back(
          static_cast<float>(std::clamp(reflectance + normal(0, 0.05) - 0.002 * range, 0.0, 1.0)));
    }
  }

  for (std::size_t j = 0; j < labelled.size(); ++j) {
    if (hits[j] < opt.min_points_per_object) continue;
    SceneObject o = labelled[j];
    o.num_points = hits[j];
    const double blocked = 1.0 - static_cast<double>(hits[j]) / std::max(unblocked[j], 1);
    o.occluded = blocked < 0.15 ? 0 : (blocked < 0.5 ? 1 : 2);
    scene.objects.push_back(o);
  }
  return scene;
}

}  // namespace ddp3d::data
