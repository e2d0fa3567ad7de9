// DeltaXYZWLHRBBoxCoder (mmdet3d): regression targets of a LiDAR box relative to its anchor.
// Centre offsets in units of the anchor's BEV diagonal (z in units of its height, measured at
// gravity centres), log size ratios, and the raw yaw difference.
#pragma once

#include <ATen/core/Tensor.h>

namespace ddp3d::models {

struct DeltaXYZWLHRBBoxCoder {
  static constexpr int64_t code_size = 7;
  // anchors, boxes [..., 7] → deltas [..., 7]
  static at::Tensor encode(const at::Tensor& anchors, const at::Tensor& boxes);
  // anchors, deltas [..., 7] → boxes [..., 7]
  static at::Tensor decode(const at::Tensor& anchors, const at::Tensor& deltas);
};

}  // namespace ddp3d::models
