// Max3DIoUAssigner (mmdet's MaxIoUAssigner with mmdet3d's BboxOverlapsNearest3D): matches
// anchors to ground-truth boxes by the axis-aligned IoU of their "nearest BEV" footprints.
#pragma once

#include <ATen/core/Tensor.h>

#include "worker/models/pointpillars/options.h"

namespace ddp3d::models {

struct AssignResult {
  // [A] int64: 0 = negative, -1 = ignored (between the thresholds), k > 0 = matched to gt k-1.
  at::Tensor assigned_gt_inds;
  // [A]: each anchor's best IoU with any gt (0 when there is no gt).
  at::Tensor max_overlaps;
};

class Max3DIoUAssigner {
 public:
  explicit Max3DIoUAssigner(Max3DIoUAssignerOptions options) : options_(options) {}

  // anchors [A, 7], gt_boxes [G, 7] (LiDAR boxes).
  AssignResult assign(const at::Tensor& anchors, const at::Tensor& gt_boxes) const;
  // The same from a precomputed [G, A] overlap matrix.
  AssignResult assign_wrt_overlaps(const at::Tensor& overlaps) const;

  const Max3DIoUAssignerOptions& options() const { return options_; }

 private:
  Max3DIoUAssignerOptions options_;
};

}  // namespace ddp3d::models
