// Greedy non-maximum suppression of rotated BEV boxes.
#pragma once

#include <ATen/core/Tensor.h>

namespace ddp3d::ops {

// boxes [N, 5] (x, y, dx, dy, yaw), scores [N]. Visits boxes by descending score and drops
// every later box whose rotated BEV IoU with a kept box is > iou_threshold. Returns the kept
// indices (int64, into the inputs) in descending score order. Runs on the inputs' device.
at::Tensor nms_rotated_bev(const at::Tensor& boxes, const at::Tensor& scores, double iou_threshold);

}  // namespace ddp3d::ops
