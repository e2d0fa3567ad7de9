#include "worker/data/voxelization.h"

#include <ATen/ATen.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "worker/data/voxel_cell.h"
#ifdef DDP3D_WITH_CUDA
#include "worker/data/cuda/voxelization_cuda.h"
#endif

namespace ddp3d::data {

namespace {

// Bounds far above any real grid (a KITTI pillar grid is 432 x 496 x 1 cells, 40000 voxels of
// 32 points): a config typo must fail here, not overflow an index or allocate terabytes.
constexpr std::int64_t kMaxCellsPerAxis = std::int64_t{1} << 20;
constexpr std::int64_t kMaxCells = std::int64_t{1} << 26;  // the dense cell -> voxel map
constexpr std::int64_t kMaxVoxels = std::int64_t{1} << 22;
constexpr std::int64_t kMaxPointsPerVoxel = std::int64_t{1} << 12;
constexpr std::int64_t kMaxVoxelTensorBytes = std::int64_t{4} << 30;

const char* const kAxis[] = {"x", "y", "z"};

}  // namespace

std::array<std::int64_t, 3> VoxelizationOptions::grid_size() const {
  std::array<std::int64_t, 3> g{};
  std::int64_t cells = 1;
  for (int a = 0; a < 3; ++a) {
    const double lo = point_cloud_range[a], hi = point_cloud_range[a + 3], size = voxel_size[a];
    const std::string axis = kAxis[a];
    if (!std::isfinite(lo) || !std::isfinite(hi) || !std::isfinite(size) || !(size > 0)) {
      throw std::invalid_argument(
          "voxelization: point_cloud_range and voxel_size must be finite "
          "and voxel_size > 0 (axis " +
          axis + ")");
    }
    const double n = std::round((hi - lo) / size);
    if (!(n >= 1)) throw std::invalid_argument("voxel_size larger than point_cloud_range");
    if (n > static_cast<double>(kMaxCellsPerAxis)) {
      throw std::invalid_argument("voxelization: " + std::to_string(n) + " cells along " + axis +
                                  " (range / voxel_size), more than " +
                                  std::to_string(kMaxCellsPerAxis));
    }
    g[a] = static_cast<std::int64_t>(n);
    cells *= g[a];  // <= 2^60 after three axes of <= 2^20: no overflow
  }
  if (cells > kMaxCells) {
    throw std::invalid_argument("voxelization: a grid of " + std::to_string(g[0]) + " x " +
                                std::to_string(g[1]) + " x " + std::to_string(g[2]) +
                                " cells is more than " + std::to_string(kMaxCells));
  }
  return g;
}

void VoxelizationOptions::validate(std::int64_t channels) const {
  grid_size();
  if (max_voxels < 1 || max_voxels > kMaxVoxels) {
    throw std::invalid_argument("voxelization: max_voxels " + std::to_string(max_voxels) +
                                " is outside [1, " + std::to_string(kMaxVoxels) + "]");
  }
  if (max_points_per_voxel < 1 || max_points_per_voxel > kMaxPointsPerVoxel) {
    throw std::invalid_argument("voxelization: max_num_points " +
                                std::to_string(max_points_per_voxel) + " is outside [1, " +
                                std::to_string(kMaxPointsPerVoxel) + "]");
  }
  // <= 2^22 * 2^12 * channels * 4: fits in int64 for any channel count below 2^27.
  if (channels < 1 || channels > (std::int64_t{1} << 16) ||
      std::int64_t{max_voxels} * max_points_per_voxel * channels * 4 > kMaxVoxelTensorBytes) {
    throw std::invalid_argument("voxelization: max_voxels x max_num_points x " +
                                std::to_string(channels) + " channels is more than " +
                                std::to_string(kMaxVoxelTensorBytes) + " bytes");
  }
}

Voxels voxelize(const at::Tensor& points_in, const VoxelizationOptions& o) {
  if (points_in.dim() != 2 || points_in.size(1) < 3) {
    throw std::invalid_argument("voxelize: points must be [N, C] with C >= 3");
  }
  o.validate(points_in.size(1));
  const at::Tensor points = points_in.to(at::kFloat).contiguous();
  if (points.is_cuda()) {
#ifdef DDP3D_WITH_CUDA
    return cuda::voxelize_cuda(points, o);
#else
    throw std::invalid_argument(
        "voxelize: points are on a CUDA device but ddp3d was built without DDP3D_WITH_CUDA");
#endif
  }
  const auto grid = o.grid_size();
  const std::int64_t n = points.size(0), c = points.size(1);
  const int max_points = o.max_points_per_voxel;
  // Cell -> voxel index, dense over the grid (a pillar grid is ~214k cells).
  std::vector<std::int32_t> cell_to_voxel(static_cast<std::size_t>(grid[0] * grid[1] * grid[2]),
                                          -1);
  at::Tensor voxels = at::zeros({o.max_voxels, max_points, c}, at::kFloat);
  at::Tensor coors = at::empty({o.max_voxels, 3}, at::kInt);
  at::Tensor num_points = at::zeros({o.max_voxels}, at::kInt);
  const float* p = points.data_ptr<float>();
  float* v = voxels.data_ptr<float>();
  std::int32_t* co = coors.data_ptr<std::int32_t>();
  std::int32_t* np = num_points.data_ptr<std::int32_t>();
  std::int32_t count = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const float* pt = p + i * c;
    std::int64_t cell[3];
    bool inside = true;
    for (int a = 0; a < 3 && inside; ++a) {
      cell[a] = voxel_cell_index(pt[a], o.point_cloud_range[a], o.voxel_size[a], grid[a]);
      inside = cell[a] >= 0;
    }
    if (!inside) continue;
    const std::int64_t key = (cell[2] * grid[1] + cell[1]) * grid[0] + cell[0];
    std::int32_t id = cell_to_voxel[static_cast<std::size_t>(key)];
    if (id < 0) {
      if (count >= o.max_voxels) continue;
      id = count++;
      cell_to_voxel[static_cast<std::size_t>(key)] = id;
      co[id * 3 + 0] = static_cast<std::int32_t>(cell[2]);
      co[id * 3 + 1] = static_cast<std::int32_t>(cell[1]);
      co[id * 3 + 2] = static_cast<std::int32_t>(cell[0]);
    }
    if (np[id] >= max_points) continue;
    std::copy(pt, pt + c, v + (static_cast<std::int64_t>(id) * max_points + np[id]) * c);
    ++np[id];
  }
  return {voxels.narrow(0, 0, count).clone(), coors.narrow(0, 0, count).clone(),
          num_points.narrow(0, 0, count).clone()};
}

Voxels collate_voxels(const std::vector<Voxels>& samples) {
  std::vector<at::Tensor> voxels, coors, nums;
  for (std::size_t b = 0; b < samples.size(); ++b) {
    const auto& s = samples[b];
    voxels.push_back(s.voxels);
    nums.push_back(s.num_points);
    coors.push_back(at::cat(
        {at::full({s.coors.size(0), 1}, static_cast<int>(b), s.coors.options()), s.coors}, 1));
  }
  return {at::cat(voxels), at::cat(coors), at::cat(nums)};
}

}  // namespace ddp3d::data
