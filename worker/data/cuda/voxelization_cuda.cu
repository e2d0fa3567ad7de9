// Hard voxelization on the GPU with the CPU path's exact result (voxelization.h): points
// visited in order, voxels numbered by their first point, a point dropped when its voxel is
// full or max_voxels voxels exist.
//
// The CPU loop is sequential; here the order is recovered instead of followed:
//   1. every point gets its cell key (outside points get a key past the grid);
//   2. a stable sort by key groups each cell's points and keeps them in point order, so a
//      point's slot in its voxel is its distance from the head of its group;
//   3. the group heads are the cells' first points; an exclusive prefix sum of "opens a cell"
//      flags in point order numbers the voxels as the CPU loop would, and numbers from
//      max_voxels on are dropped, whole cells at a time, as on the CPU;
//   4. one thread per point writes its features into (voxel, slot) when slot < max_points.
// Everything is a gather or a write to a unique place: no atomics, deterministic.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>

#include <algorithm>
#include <cstdint>
#include <optional>

#include "worker/data/cuda/voxelization_cuda.h"
#include "worker/data/voxel_cell.h"

namespace ddp3d::data::cuda {
namespace {

constexpr int kThreads = 256;

struct Grid {
  double lo[3];
  double size[3];
  std::int64_t cells[3];  // x, y, z
  std::int64_t total;     // the key of points outside the range
};

unsigned blocks_for(std::int64_t n) {
  return static_cast<unsigned>((n + kThreads - 1) / kThreads);
}

// Same key as the CPU loop: (z * cells_y + y) * cells_x + x.
__global__ void cell_keys_kernel(const float* __restrict__ points, std::int64_t n, std::int64_t c,
                                 Grid grid, std::int64_t* __restrict__ keys) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float* pt = points + i * c;
  std::int64_t cell[3];
  for (int a = 0; a < 3; ++a) {
    cell[a] = voxel_cell_index(pt[a], grid.lo[a], grid.size[a], grid.cells[a]);
    if (cell[a] < 0) {
      keys[i] = grid.total;
      return;
    }
  }
  keys[i] = (cell[2] * grid.cells[1] + cell[1]) * grid.cells[0] + cell[0];
}

// Over the sorted keys: head_pos[s] = s at the head of a cell's group (0 elsewhere, for the
// running max that spreads it), and opens[point] = 1 for the point that opens its cell.
__global__ void group_heads_kernel(const std::int64_t* __restrict__ sorted_keys,
                                   const std::int64_t* __restrict__ order, std::int64_t n,
                                   std::int64_t outside_key, std::int64_t* __restrict__ head_pos,
                                   std::int64_t* __restrict__ opens) {
  const std::int64_t s = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (s >= n) return;
  const std::int64_t key = sorted_keys[s];
  const bool head = key != outside_key && (s == 0 || sorted_keys[s - 1] != key);
  head_pos[s] = head ? s : 0;
  if (head) opens[order[s]] = 1;
}

// One thread per sorted position: the point order[s] goes to slot s - group_start[s] of the
// voxel its cell's first point opened.
__global__ void scatter_kernel(const float* __restrict__ points, std::int64_t n, std::int64_t c,
                               const std::int64_t* __restrict__ sorted_keys,
                               const std::int64_t* __restrict__ order,
                               const std::int64_t* __restrict__ group_start,
                               const std::int64_t* __restrict__ voxel_of_opener, Grid grid,
                               std::int64_t num_voxels, int max_points, float* __restrict__ voxels,
                               std::int32_t* __restrict__ coors,
                               std::int32_t* __restrict__ num_points) {
  const std::int64_t s = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (s >= n) return;
  const std::int64_t key = sorted_keys[s];
  if (key == grid.total) return;
  const std::int64_t start = group_start[s];
  const std::int64_t voxel = voxel_of_opener[order[start]];
  if (voxel >= num_voxels) return;  // the cell opened after max_voxels: dropped whole
  const std::int64_t slot = s - start;
  if (slot == 0) {
    coors[voxel * 3 + 0] = static_cast<std::int32_t>(key / (grid.cells[0] * grid.cells[1]));
    coors[voxel * 3 + 1] = static_cast<std::int32_t>((key / grid.cells[0]) % grid.cells[1]);
    coors[voxel * 3 + 2] = static_cast<std::int32_t>(key % grid.cells[0]);
  }
  if (slot >= max_points) return;
  const bool last_in_group = s + 1 == n || sorted_keys[s + 1] != key;
  if (last_in_group || slot + 1 == max_points) {
    num_points[voxel] = static_cast<std::int32_t>(slot + 1);
  }
  const float* src = points + order[s] * c;
  float* dst = voxels + (voxel * max_points + slot) * c;
  for (std::int64_t k = 0; k < c; ++k) dst[k] = src[k];
}

}  // namespace

Voxels voxelize_cuda(const at::Tensor& points, const VoxelizationOptions& o) {
  const c10::cuda::CUDAGuard guard(points.device());
  const std::int64_t n = points.size(0);
  const std::int64_t c = points.size(1);
  const int max_points = o.max_points_per_voxel;
  const auto cells = o.grid_size();
  Grid grid{};
  for (int a = 0; a < 3; ++a) {
    grid.lo[a] = o.point_cloud_range[static_cast<std::size_t>(a)];
    grid.size[a] = o.voxel_size[static_cast<std::size_t>(a)];
    grid.cells[a] = cells[static_cast<std::size_t>(a)];
  }
  grid.total = cells[0] * cells[1] * cells[2];

  const at::TensorOptions longs = points.options().dtype(at::kLong);
  const at::TensorOptions ints = points.options().dtype(at::kInt);
  if (n == 0) {
    return {at::zeros({0, max_points, c}, points.options()), at::empty({0, 3}, ints),
            at::empty({0}, ints)};
  }
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();

  at::Tensor keys = at::empty({n}, longs);
  cell_keys_kernel<<<blocks_for(n), kThreads, 0, stream>>>(points.data_ptr<float>(), n, c, grid,
                                                           keys.data_ptr<std::int64_t>());
  C10_CUDA_KERNEL_LAUNCH_CHECK();

  // The optional<bool> overload: a plain `true` would bind to sort(self, dim, descending).
  const auto [sorted_keys, order] =
      at::sort(keys, std::optional<bool>(true), /*dim=*/0, /*descending=*/false);
  at::Tensor head_pos = at::empty({n}, longs);
  at::Tensor opens = at::zeros({n}, longs);
  group_heads_kernel<<<blocks_for(n), kThreads, 0, stream>>>(
      sorted_keys.data_ptr<std::int64_t>(), order.data_ptr<std::int64_t>(), n, grid.total,
      head_pos.data_ptr<std::int64_t>(), opens.data_ptr<std::int64_t>());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  const at::Tensor group_start = std::get<0>(at::cummax(head_pos, 0));
  const at::Tensor opens_inclusive = at::cumsum(opens, 0);
  const at::Tensor voxel_of_opener = opens_inclusive - opens;  // exclusive prefix sum

  const std::int64_t cells_seen = opens_inclusive[n - 1].item<std::int64_t>();
  const std::int64_t num_voxels = std::min<std::int64_t>(cells_seen, o.max_voxels);
  at::Tensor voxels = at::zeros({num_voxels, max_points, c}, points.options());
  at::Tensor coors = at::empty({num_voxels, 3}, ints);
  at::Tensor num_points = at::zeros({num_voxels}, ints);
  if (num_voxels > 0) {
    scatter_kernel<<<blocks_for(n), kThreads, 0, stream>>>(
        points.data_ptr<float>(), n, c, sorted_keys.data_ptr<std::int64_t>(),
        order.data_ptr<std::int64_t>(), group_start.data_ptr<std::int64_t>(),
        voxel_of_opener.data_ptr<std::int64_t>(), grid, num_voxels, max_points,
        voxels.data_ptr<float>(), coors.data_ptr<std::int32_t>(),
        num_points.data_ptr<std::int32_t>());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }
  return {voxels, coors, num_points};
}

}  // namespace ddp3d::data::cuda
