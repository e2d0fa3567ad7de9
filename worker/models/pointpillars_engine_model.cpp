#include "worker/models/pointpillars_engine_model.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "worker/models/pointpillars_config.h"

namespace ddp3d::models {

PointPillarsModel::PointPillarsModel(PointPillarsOptions options,
                                     data::VoxelizationOptions voxel_layer,
                                     std::int64_t max_voxels_train, std::int64_t max_voxels_test)
    : detector_(VoxelNet(std::move(options))),
      voxel_layer_(voxel_layer),
      max_voxels_train_(max_voxels_train),
      max_voxels_test_(max_voxels_test) {
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

BatchedPillars PointPillarsModel::pillars(const engine::Batch& batch) const {
  if (batch.lists.count("voxels") != 0) return batch_pillars(batch);
  data::VoxelizationOptions o = voxel_layer_;
  o.max_voxels = static_cast<int>(is_training() ? max_voxels_train_ : max_voxels_test_);
  return voxelize_batch(batch.list("points"), o);
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

void register_models(engine::Registry<engine::Model>& registry) {
  registry.add("PointPillars", [](const config::Config& model) {
    const config::Config vl = model.node("data_preprocessor.voxel_layer");
    data::VoxelizationOptions o;
    const auto range = vl.get<std::vector<double>>("point_cloud_range");
    const auto size = vl.get<std::vector<double>>("voxel_size");
    const auto max_voxels = vl.get_or<std::vector<std::int64_t>>("max_voxels", {16000, 40000});
    if (range.size() != 6 || size.size() != 3 || max_voxels.size() != 2) {
      throw config::ConfigError(vl.origin(), vl.path(),
                                "point_cloud_range needs 6 numbers, voxel_size 3, max_voxels 2");
    }
    std::copy(range.begin(), range.end(), o.point_cloud_range.begin());
    std::copy(size.begin(), size.end(), o.voxel_size.begin());
    o.max_points_per_voxel = vl.get_or<int>("max_num_points", 32);
    // Range, grid and tensor sizes checked here, naming the key, before any int narrowing.
    for (std::size_t i = 0; i < max_voxels.size(); ++i) {
      o.max_voxels = static_cast<int>(std::clamp<std::int64_t>(max_voxels[i], 0, INT32_MAX));
      try {
        o.validate(4);  // x, y, z, reflectance
      } catch (const std::invalid_argument& e) {
        throw config::ConfigError(
            vl.origin("max_voxels"), vl.path(),
            e.what() + (max_voxels[i] > INT32_MAX ? " (max_voxels." + std::to_string(i) + " is " +
                                                        std::to_string(max_voxels[i]) + ")"
                                                  : std::string()));
      }
    }
    return std::make_shared<PointPillarsModel>(pointpillars_options_from_config(model), o,
                                               max_voxels[0], max_voxels[1]);
  });
}

}  // namespace ddp3d::models
