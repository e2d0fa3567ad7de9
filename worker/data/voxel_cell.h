// The point → cell rule of voxelization, shared by the CPU loop and the CUDA kernel so that
// both put every point in the same cell bit for bit (host/device when compiled by nvcc).
#pragma once

#include <cmath>
#include <cstdint>

#ifndef DDP3D_HOST_DEVICE
#if defined(__CUDACC__)
#define DDP3D_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define DDP3D_HOST_DEVICE inline
#endif
#endif

namespace ddp3d::data {

// Index of the cell holding `coord` along one axis of a grid of `cells` cells of `size` from
// `lo`, or -1 when it lies outside. Computed in double (the options are double); NaN and
// infinities fall outside.
DDP3D_HOST_DEVICE std::int64_t voxel_cell_index(float coord, double lo, double size,
                                                std::int64_t cells) {
  const double f = ::floor((static_cast<double>(coord) - lo) / size);
  return (f >= 0.0 && f < static_cast<double>(cells)) ? static_cast<std::int64_t>(f) : -1;
}

}  // namespace ddp3d::data
