// The PointPillars detector behind the engine's Model interface (worker/engine/model.h), and
// its registration under the config type name "PointPillars". The detector itself
// (detectors/voxelnet.h) does not depend on the engine; this thin adapter does.
//
// Batch fields (per-sample lists):
//   points [N_i, C]                                                        (inputs), voxelized
//     here with model.data_preprocessor.voxel_layer, as mmdet3d's Det3DDataPreprocessor does;
//   or voxels [M_i, P, C], num_points [M_i], coors [M_i, 3] = (z, y, x)   (already voxelized)
//   gt_bboxes_3d [G_i, 7] LiDAR boxes, gt_labels_3d [G_i] int64            (training)
// predict() returns per sample: bboxes_3d [K, 7], scores_3d [K], labels_3d [K].
#pragma once

#include "worker/data/voxelization.h"
#include "worker/engine/model.h"
#include "worker/engine/registry.h"
#include "worker/models/detectors/voxelnet.h"

namespace ddp3d::models {

// Pillars of a batch concatenated into the detector's layout: coors gain the batch index.
struct BatchedPillars {
  at::Tensor voxels;      // [Σ M_i, P, C]
  at::Tensor num_points;  // [Σ M_i]
  at::Tensor coors;       // [Σ M_i, 4] = (batch, z, y, x)
};

class PointPillarsModel : public engine::Model {
 public:
  // Voxelizes with options.data_preprocessor.voxel_layer (max_voxels [train, test] by mode).
  // `parts` builds the parts the options do not (see VoxelNet).
  explicit PointPillarsModel(PointPillarsOptions options, const VoxelNetParts& parts = {});

  engine::LossMap forward_train(const engine::Batch& batch) override;
  std::vector<engine::Sample> predict(const engine::Batch& batch) override;

  VoxelNet detector() const { return detector_; }

 private:
  // The batch's pillars: voxelized here from `points`, or as the batch carries them.
  BatchedPillars pillars(const engine::Batch& batch) const;

  VoxelNet detector_{nullptr};
  VoxelLayerOptions voxel_layer_;
};

// The voxelizer's options for a voxel layer, with its training or its test max_voxels.
data::VoxelizationOptions voxelization_options(const VoxelLayerOptions& voxel_layer, bool train);

BatchedPillars batch_pillars(const engine::Batch& batch);
// The same from per-sample point clouds, voxelized with `options` (each sample on its device).
BatchedPillars voxelize_batch(const std::vector<at::Tensor>& points,
                              const data::VoxelizationOptions& options);

// Adds "PointPillars" and "CenterPoint" to `registry`: one pillar detector, read with
// pointpillars_options_from_config, each part built by its kind's registry
// (voxel_encoder_registry(), middle_encoder_registry(), backbone_registry(), neck_registry(),
// head_registry()). Their schemas: register_pointpillars_schemas (pointpillars/fields.h) and
// register_centerpoint_schemas (centerpoint/fields.h).
void register_models(engine::Registry<engine::Model>& registry);

}  // namespace ddp3d::models
