// What one PointPillars benchmark run trains: the network, the voxel layer, the augmentation
// ranges, the batch and the optimizer, read from a training config. The C++ driver builds from
// it directly; the PyTorch reference gets it as JSON (to_json), so both sides always train the
// same network on the same inputs, whatever the config says today.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "worker/config/config.h"
#include "worker/data/voxelization.h"
#include "worker/models/pointpillars/options.h"

namespace ddp3d::bench {

// RandomFlip3D + GlobalRotScaleTrans of the train pipeline (no translation in mmdet3d's KITTI
// configs).
struct AugmentSpec {
  double flip_ratio = 0.5;
  std::array<double, 2> rot_range{-0.78539816, 0.78539816};
  std::array<double, 2> scale_range{0.95, 1.05};
  // PointShuffle. Off only for checks that compare voxel contents across implementations
  // (the two sides' permutations differ; which points a full pillar keeps depends on them).
  bool point_shuffle = true;
};

// optim_wrapper: AdamW and gradient clipping.
struct OptimSpec {
  double lr = 0.0018;
  std::array<double, 2> betas{0.95, 0.99};
  double weight_decay = 0.01;
  double eps = 1e-8;
  double clip_max_norm = 0.0;  // <= 0: no clipping
};

struct BenchSpec {
  std::string config;
  std::vector<std::string> classes;
  int batch_size = 1;  // per rank
  models::PointPillarsOptions model;
  data::VoxelizationOptions voxel;  // max_voxels = the training value
  AugmentSpec augment;
  OptimSpec optim;
};

// Throws config::ConfigError naming the key when the config lacks what the benchmark needs.
BenchSpec bench_spec_from_config(const config::Config& cfg, const std::string& path);

// The spec as one JSON object (what torch_pointpillars_bench.py reads), with the C++ model's
// parameter count so the reference can check that it built the same network.
std::string to_json(const BenchSpec& spec, std::int64_t num_parameters);

}  // namespace ddp3d::bench
