// AlignedAnchor3DRangeGenerator (mmdet3d): a grid of anchors over a BEV range, one cell centre
// per feature-map cell (cell centres, not corners, unless align_corner), for every
// (size, rotation) pair. Anchors are LiDAR boxes (x, y, z_bottom, dx, dy, dz, yaw).
#pragma once

#include <ATen/core/Tensor.h>

#include "worker/models/pointpillars/options.h"

namespace ddp3d::models {

class Anchor3DRangeGenerator {
 public:
  explicit Anchor3DRangeGenerator(AnchorGeneratorOptions options);

  // Anchors per feature-map location: sizes × rotations (size-major order).
  int64_t num_base_anchors() const;
  int64_t num_sizes() const;
  int64_t num_rotations() const;

  // [H, W, num_sizes, num_rotations, 7] for a feature map of H × W (rows along y, columns
  // along x). Flattened (reshape(-1, 7)) it matches the head's channel layout.
  at::Tensor grid_anchors(int64_t height, int64_t width, const at::TensorOptions& options) const;

 private:
  AnchorGeneratorOptions options_;
};

}  // namespace ddp3d::models
