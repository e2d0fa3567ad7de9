// Hard voxelization (pillars when the voxel spans the whole height), mmcv's semantics:
// points are visited in order; a point opens a new voxel if its cell has none and fewer than
// max_voxels exist, joins its cell's voxel if that holds fewer than max_points, and is
// dropped otherwise. Voxels are numbered in the order their first point appears.
#pragma once

#include <ATen/core/Tensor.h>

#include <array>
#include <vector>

namespace ddp3d::data {

struct VoxelizationOptions {
  std::array<double, 6> point_cloud_range{0, -39.68, -3, 69.12, 39.68, 1};  // x0 y0 z0 x1 y1 z1
  std::array<double, 3> voxel_size{0.16, 0.16, 4};
  int max_points_per_voxel = 32;
  int max_voxels = 16000;

  // Cells along x, y, z. Throws std::invalid_argument for a non-finite range or voxel size,
  // a voxel_size <= 0, or a grid too large to index (per axis or in total).
  std::array<std::int64_t, 3> grid_size() const;
  // grid_size()'s checks, plus max_voxels and max_points_per_voxel in range and the voxel
  // tensor [max_voxels, max_points, channels] of bounded size. voxelize() calls it first.
  void validate(std::int64_t channels) const;
};

struct Voxels {
  at::Tensor voxels;      // [M, max_points, C] float, zero-padded
  at::Tensor coors;       // [M, 3] int32 cell (z, y, x) — or [M, 4] (batch, z, y, x) batched
  at::Tensor num_points;  // [M] int32
};

// One point cloud [N, C] (C >= 3; x, y, z first).
Voxels voxelize(const at::Tensor& points, const VoxelizationOptions& options);

// Concatenates per-sample voxels, prefixing each cell with its sample's index in the batch.
Voxels collate_voxels(const std::vector<Voxels>& samples);

}  // namespace ddp3d::data
