// CUDA entry point of hard voxelization (compiled only with DDP3D_WITH_CUDA). voxelize()
// dispatches here for CUDA points; the result equals the CPU path's exactly.
#pragma once

#include <ATen/core/Tensor.h>

#include "worker/data/voxelization.h"

namespace ddp3d::data::cuda {

// points: contiguous float32 [N, C] on a CUDA device, already validated by voxelize().
// Returns tensors on the same device.
Voxels voxelize_cuda(const at::Tensor& points, const VoxelizationOptions& options);

}  // namespace ddp3d::data::cuda
