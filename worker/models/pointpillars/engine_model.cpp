#include "worker/models/pointpillars/engine_model.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "worker/models/pointpillars/config.h"

namespace ddp3d::models {

PointPillarsModel::PointPillarsModel(PointPillarsOptions options, const VoxelNetParts& parts)
    : voxel_layer_(options.data_preprocessor.voxel_layer) {
  detector_ = VoxelNet(std::move(options), parts);
  // The detector's parts become this module's direct children, so parameter and state_dict
  // names are mmdet3d's (voxel_encoder.pfn_layers.0.linear.weight, backbone.blocks.0.0.weight,
  // bbox_head.conv_cls.bias, ...) and train()/eval()/to() reach every part.
  register_module("voxel_encoder", detector_->voxel_encoder());
  register_module("middle_encoder", detector_->middle_encoder());
  register_module("backbone", detector_->backbone());
  register_module("neck", detector_->neck());
  register_module("bbox_head", detector_->bbox_head());
}

BatchedPillars batch_pillars(const engine::Batch& batch) {
  const auto& voxels = batch.list("voxels");
  const auto& num_points = batch.list("num_points");
  const auto& coors = batch.list("coors");
  TORCH_CHECK(static_cast<int64_t>(voxels.size()) == batch.size &&
                  num_points.size() == voxels.size() && coors.size() == voxels.size(),
              "PointPillars: batch of ", batch.size, " samples has ", voxels.size(), " voxels, ",
              num_points.size(), " num_points and ", coors.size(), " coors entries");
  std::vector<at::Tensor> indexed;
  indexed.reserve(coors.size());
  for (size_t b = 0; b < coors.size(); ++b) {
    TORCH_CHECK(coors[b].dim() == 2 && coors[b].size(1) == 3, "PointPillars: coors of sample ", b,
                " must be [M, 3] (z, y, x), got ", coors[b].sizes());
    const at::Tensor c = coors[b].to(at::kLong);
    indexed.push_back(
        at::cat({at::full({c.size(0), 1}, static_cast<int64_t>(b), c.options()), c}, 1));
  }
  return {at::cat(voxels), at::cat(num_points), at::cat(indexed)};
}

BatchedPillars voxelize_batch(const std::vector<at::Tensor>& points,
                              const data::VoxelizationOptions& options) {
  std::vector<data::Voxels> per_sample;
  per_sample.reserve(points.size());
  for (const at::Tensor& p : points) per_sample.push_back(data::voxelize(p, options));
  const data::Voxels v = data::collate_voxels(per_sample);
  return {v.voxels, v.num_points, v.coors.to(at::kLong)};
}

data::VoxelizationOptions voxelization_options(const VoxelLayerOptions& voxel_layer, bool train) {
  data::VoxelizationOptions o;
  o.point_cloud_range = voxel_layer.point_cloud_range;
  o.voxel_size = voxel_layer.voxel_size;
  o.max_points_per_voxel =
      static_cast<int>(std::clamp<std::int64_t>(voxel_layer.max_num_points, 0, INT32_MAX));
  o.max_voxels = static_cast<int>(
      std::clamp<std::int64_t>(voxel_layer.max_voxels[train ? 0 : 1], 0, INT32_MAX));
  return o;
}

BatchedPillars PointPillarsModel::pillars(const engine::Batch& batch) const {
  if (batch.lists.count("voxels") != 0) return batch_pillars(batch);
  return voxelize_batch(batch.list("points"), voxelization_options(voxel_layer_, is_training()));
}

engine::LossMap PointPillarsModel::forward_train(const engine::Batch& batch) {
  const BatchedPillars p = pillars(batch);
  return detector_->forward_train(p.voxels, p.num_points, p.coors, batch.list("gt_bboxes_3d"),
                                  batch.list("gt_labels_3d"));
}

std::vector<engine::Sample> PointPillarsModel::predict(const engine::Batch& batch) {
  const BatchedPillars p = pillars(batch);
  const std::vector<Detections> dets =
      detector_->predict(p.voxels, p.num_points, p.coors, batch.size);
  std::vector<engine::Sample> out(dets.size());
  for (size_t b = 0; b < dets.size(); ++b) {
    out[b].tensors["bboxes_3d"] = dets[b].boxes;
    out[b].tensors["scores_3d"] = dets[b].scores;
    out[b].tensors["labels_3d"] = dets[b].labels;
    if (b < batch.meta.size()) out[b].meta = batch.meta[b];
  }
  return out;
}

namespace {

// Range, grid and tensor sizes checked for both modes, naming the key, before any int
// narrowing: a hostile max_voxels or voxel_size must be a config error, not an overflow.
void check_voxel_layer(const config::Config& vl, const VoxelLayerOptions& layer) {
  for (std::size_t i = 0; i < layer.max_voxels.size(); ++i) {
    data::VoxelizationOptions o = voxelization_options(layer, i == 0);
    try {
      o.validate(4);  // x, y, z, reflectance
    } catch (const std::invalid_argument& e) {
      const std::int64_t requested = layer.max_voxels[i];
      throw config::ConfigError(
          vl.origin("max_voxels"), vl.path(),
          e.what() + (requested > INT32_MAX ? " (max_voxels." + std::to_string(i) + " is " +
                                                  std::to_string(requested) + ")"
                                            : std::string()));
    }
  }
}

// PointPillars and CenterPoint: the same pillar detector, each part built by its kind's
// registry; the head reads the model's train_cfg and test_cfg.
std::shared_ptr<engine::Model> build_pillar_detector(const config::Config& model) {
  PointPillarsOptions options = pointpillars_options_from_config(model);
  check_voxel_layer(model.node("data_preprocessor.voxel_layer"),
                    options.data_preprocessor.voxel_layer);
  VoxelNetParts parts;
  parts.voxel_encoder = [model] {
    return voxel_encoder_registry().build_at(model, "voxel_encoder.type");
  };
  parts.middle_encoder = [node = model.node("middle_encoder")] {
    return middle_encoder_registry().build(node);
  };
  parts.backbone = [node = model.node("backbone")] { return backbone_registry().build(node); };
  parts.neck = [node = model.node("neck")] { return neck_registry().build(node); };
  parts.head = [model] { return head_registry().build_at(model, "bbox_head.type"); };
  return std::make_shared<PointPillarsModel>(std::move(options), parts);
}

}  // namespace

void register_models(engine::Registry<engine::Model>& registry) {
  registry.add("PointPillars", build_pillar_detector);
  registry.add("CenterPoint", build_pillar_detector);
}

}  // namespace ddp3d::models
