// CUDA entry points of the box ops (compiled only with DDP3D_WITH_CUDA). Inputs are
// contiguous float32 CUDA tensors already validated by the CPU-side dispatchers.
#pragma once

#include <ATen/core/Tensor.h>

namespace ddp3d::ops::cuda {

enum class PairwiseMeasure { kBevIntersection, kBevIou, k3dIou };

// [N, D] × [M, D] → [N, M] float32 on the same device.
at::Tensor pairwise_box_measure_cuda(const at::Tensor& boxes1, const at::Tensor& boxes2,
                                     PairwiseMeasure measure);

// boxes [N, 5] already sorted by descending score; returns kept positions (int64, CPU) in that
// order.
at::Tensor nms_rotated_bev_sorted_cuda(const at::Tensor& sorted_boxes, double iou_threshold);

}  // namespace ddp3d::ops::cuda
