// Overlap measures between sets of 3D / BEV boxes (LiDAR frame, mmdet3d's box layout).
//
//  - BEV box:   (x, y, dx, dy, yaw)                    [N, 5]
//  - LiDAR box: (x, y, z_bottom, dx, dy, dz, yaw, ...) [N, >=7]
//  - aligned BEV box: (x1, y1, x2, y2)                 [N, 4]
//
// Every function returns the [N, M] matrix of pairwise values in the first input's dtype;
// CUDA tensors run on the GPU when ddp3d is built with DDP3D_WITH_CUDA.
#pragma once

#include <ATen/core/Tensor.h>

namespace ddp3d::ops {

// Exact IoU of rotated BEV rectangles (polygon clipping).
at::Tensor box_iou_rotated_bev(const at::Tensor& boxes1, const at::Tensor& boxes2);

// Area of the pairwise intersection of rotated BEV rectangles.
at::Tensor box_intersection_rotated_bev(const at::Tensor& boxes1, const at::Tensor& boxes2);

// Axis-aligned BEV IoU of (x1, y1, x2, y2) boxes.
at::Tensor box_iou_aligned_bev(const at::Tensor& boxes1, const at::Tensor& boxes2);

// mmdet3d's "nearest BEV" of LiDAR boxes: the axis-aligned box of the BEV footprint after
// snapping the yaw to the nearest multiple of π/2 (dx and dy swap when |yaw| mod π > π/4).
at::Tensor nearest_bev(const at::Tensor& boxes);

// IoU of nearest_bev(boxes1) and nearest_bev(boxes2): mmdet3d's BboxOverlapsNearest3D,
// which its Max3DIoUAssigner uses to match anchors and ground truth.
at::Tensor box_iou_nearest_bev(const at::Tensor& boxes1, const at::Tensor& boxes2);

// 3D IoU of LiDAR boxes: rotated BEV intersection × height overlap over the union volume.
at::Tensor box_iou_3d(const at::Tensor& boxes1, const at::Tensor& boxes2);

}  // namespace ddp3d::ops
