// What a voxel-based detector needs of its middle encoder: the voxel features arranged as a
// dense bird's-eye-view map for the backbone. PointPillarsScatter is one;
// middle_encoder_registry() builds any registered one by model.middle_encoder.type.
#pragma once

#include <torch/nn/module.h>

#include <cstdint>
#include <functional>
#include <memory>

#include "worker/config/registry.h"

namespace ddp3d::models {

class MiddleEncoderImpl : public torch::nn::Module {
 public:
  // voxel_features [M, in_channels], coors [M, 4] = (batch, z, y, x) →
  // [batch_size, C, ny, nx], the map the backbone reads.
  virtual at::Tensor forward(const at::Tensor& voxel_features, const at::Tensor& coors,
                             int64_t batch_size) = 0;
};

using MiddleEncoderPtr = std::shared_ptr<MiddleEncoderImpl>;
// Builds the encoder when the detector reaches it (parameters are initialised in module order).
using MiddleEncoderFactory = std::function<MiddleEncoderPtr()>;

// model.middle_encoder types: PointPillarsScatter, and what a test or another library adds
// (with its schema in config::component_schemas(), kind "middle_encoder").
config::Registry<MiddleEncoderImpl>& middle_encoder_registry();

}  // namespace ddp3d::models
