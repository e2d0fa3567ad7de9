// What a voxel-based detector needs of its voxel encoder: one feature vector per voxel (pillar)
// from its points. PillarFeatureNet is one; voxel_encoder_registry() builds any registered one
// by model.voxel_encoder.type.
#pragma once

#include <torch/nn/module.h>

#include <functional>
#include <memory>

#include "worker/config/registry.h"

namespace ddp3d::models {

class VoxelEncoderImpl : public torch::nn::Module {
 public:
  // voxels [M, P, in_channels] (points padded with zeros), num_points [M] (>= 1),
  // coors [M, 4] = (batch, z, y, x) → voxel features [M, feat_channels[-1]].
  virtual at::Tensor forward(const at::Tensor& voxels, const at::Tensor& num_points,
                             const at::Tensor& coors) = 0;
};

using VoxelEncoderPtr = std::shared_ptr<VoxelEncoderImpl>;
// Builds the encoder when the detector reaches it (parameters are initialised in module order).
using VoxelEncoderFactory = std::function<VoxelEncoderPtr()>;

// model.voxel_encoder types: PillarFeatureNet, and what a test or another library adds (with
// its schema in config::component_schemas(), kind "voxel_encoder"). A factory gets the whole
// `model` node (PillarFeatureNet's voxel_size and range default to the voxel layer's): build
// with voxel_encoder_registry().build(model, "voxel_encoder.type").
config::Registry<VoxelEncoderImpl>& voxel_encoder_registry();

}  // namespace ddp3d::models
