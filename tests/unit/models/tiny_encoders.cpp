#include "tests/unit/models/tiny_encoders.h"

#include <ATen/ATen.h>

#include <vector>

#include "worker/config/component_schemas.h"

namespace ddp3d::testing {

TinyVoxelEncoderImpl::TinyVoxelEncoderImpl(std::int64_t in_channels, std::int64_t out_channels) {
  ++builds;
  linear_ = register_module("linear", torch::nn::Linear(in_channels, out_channels));
}

at::Tensor TinyVoxelEncoderImpl::forward(const at::Tensor& voxels, const at::Tensor& num_points,
                                         const at::Tensor& coors) {
  ++forwards;
  // Padding slots are zero, so the sum over slots is the sum over points.
  const at::Tensor mean =
      voxels.sum(1) / num_points.to(voxels.scalar_type()).clamp_min(1).unsqueeze(1);
  return at::relu(linear_->forward(mean));
}

TinyScatterImpl::TinyScatterImpl(std::int64_t in_channels, std::array<std::int64_t, 2> output_shape)
    : channels_(in_channels), shape_(output_shape) {
  ++builds;
}

at::Tensor TinyScatterImpl::forward(const at::Tensor& voxel_features, const at::Tensor& coors,
                                    std::int64_t batch_size) {
  ++forwards;
  const std::int64_t ny = shape_[0];
  const std::int64_t nx = shape_[1];
  const at::Tensor cell =
      (coors.select(1, 0) * ny + coors.select(1, 2)) * nx + coors.select(1, 3);  // b, y, x
  at::Tensor canvas = at::zeros({batch_size * ny * nx, channels_}, voxel_features.options());
  canvas = canvas.index_add(0, cell, voxel_features);
  return canvas.view({batch_size, ny, nx, channels_}).permute({0, 3, 1, 2}).contiguous();
}

void register_tiny_encoders() {
  using S = config::Schema;
  config::component_schemas().add(
      "voxel_encoder", "TinyVoxelEncoder",
      {{"in_channels", S::integer().min(1).required()},
       {"feat_channels", S::list(S::integer().min(1)).length(1).required()}});
  models::voxel_encoder_registry().add("TinyVoxelEncoder", [](const config::Config& model) {
    return std::make_shared<TinyVoxelEncoderImpl>(
        model.get<std::int64_t>("voxel_encoder.in_channels"),
        model.get<std::vector<std::int64_t>>("voxel_encoder.feat_channels").at(0));
  });
  config::component_schemas().add(
      "middle_encoder", "TinyScatter",
      {{"in_channels", S::integer().min(1).required()},
       {"output_shape", S::list(S::integer().min(1)).length(2).required()}});
  models::middle_encoder_registry().add("TinyScatter", [](const config::Config& node) {
    const auto shape = node.get<std::vector<std::int64_t>>("output_shape");
    return std::make_shared<TinyScatterImpl>(node.get<std::int64_t>("in_channels"),
                                             std::array<std::int64_t, 2>{shape.at(0), shape.at(1)});
  });
}

}  // namespace ddp3d::testing
