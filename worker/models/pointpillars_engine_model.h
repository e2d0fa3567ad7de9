// The PointPillars detector behind the engine's Model interface (worker/engine/model.h), and
// its registration under the config type name "PointPillars". The detector itself
// (detectors/voxelnet.h) does not depend on the engine; this thin adapter does.
//
// Batch fields (per-sample lists, as the data pipeline's voxelizer produces them):
//   voxels [M_i, P, 4], num_points [M_i], coors [M_i, 3] = (z, y, x)      (inputs)
//   gt_bboxes_3d [G_i, 7] LiDAR boxes, gt_labels_3d [G_i] int64            (training)
// predict() returns per sample: bboxes_3d [K, 7], scores_3d [K], labels_3d [K].
#pragma once

#include "worker/engine/model.h"
#include "worker/engine/registry.h"
#include "worker/models/detectors/voxelnet.h"

namespace ddp3d::models {

class PointPillarsModel : public engine::Model {
 public:
  explicit PointPillarsModel(PointPillarsOptions options);

  engine::LossMap forward_train(const engine::Batch& batch) override;
  std::vector<engine::Sample> predict(const engine::Batch& batch) override;

  VoxelNet detector() const { return detector_; }

 private:
  VoxelNet detector_{nullptr};
};

// Pillars of a batch concatenated into the detector's layout: coors gain the batch index.
struct BatchedPillars {
  at::Tensor voxels;      // [Σ M_i, P, C]
  at::Tensor num_points;  // [Σ M_i]
  at::Tensor coors;       // [Σ M_i, 4] = (batch, z, y, x)
};
BatchedPillars batch_pillars(const engine::Batch& batch);

// Adds "PointPillars" (built with pointpillars_options_from_config) to `registry`. The engine's
// register_builtin_components() calls it with its model registry.
void register_models(engine::Registry<engine::Model>& registry);

}  // namespace ddp3d::models
