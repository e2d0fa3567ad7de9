// Synthetic lidar scenes for demos and tests: a simulated 64-beam spinning lidar (KITTI's
// HDL-64E geometry, front field of view) casts rays against a ground plane, labelled objects
// (cars, pedestrians, cyclists built from a few boxes each, with realistic sizes and yaw) and
// unlabelled clutter (walls, poles, bushes). Occlusion, density falling with distance, range
// noise and dropout come from the ray casting itself. Deterministic for a given seed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "worker/data/lidar_box.h"

namespace ddp3d::data {

struct SceneOptions {
  int beams = 64;
  double elevation_max_deg = 2.0;
  double elevation_min_deg = -24.8;
  double azimuth_half_fov_deg = 45.0;  // around +x, about the camera's field of view
  double azimuth_step_deg = 0.16;
  double max_range = 80.0;
  double sensor_height = 1.73;    // ground at z = -sensor_height
  double range_noise = 0.02;      // metres, 1 sigma
  double dropout = 0.03;          // share of returns lost
  int min_points_per_object = 5;  // fewer hits: not labelled (not visible)
  int max_cars = 12, max_pedestrians = 4, max_cyclists = 2;
  double max_object_distance = 60.0;  // labelled objects' centres: x in [4, this]
  double max_object_lateral = 38.0;   // ... and |y| up to this (and inside the field of view)
};

struct SceneObject {
  std::string type;  // Car, Pedestrian, Cyclist
  LidarBox box;
  int num_points = 0;
  int occluded = 0;  // KITTI's level, from the share of the object's rays blocked by others
};

struct SyntheticScene {
  std::vector<float> points;  // x, y, z, reflectance per point
  std::vector<SceneObject> objects;
  std::int64_t num_points() const { return static_cast<std::int64_t>(points.size() / 4); }
};

SyntheticScene generate_scene(const SceneOptions& options, std::uint64_t seed);

}  // namespace ddp3d::data
