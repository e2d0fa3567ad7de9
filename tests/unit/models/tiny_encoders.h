// A voxel encoder and a middle encoder that no worker library has, for plugin_parts_test:
// TinyVoxelEncoder averages each pillar's points and maps the mean through one Linear + ReLU;
// TinyScatter sums the features of the pillars that share a cell onto the BEV map. Each counts
// its builds and forwards, so a test can tell that it, not PointPillars' own, ran.
#pragma once

#include <torch/nn/modules/linear.h>

#include <array>
#include <cstdint>

#include "worker/models/middle_encoders/middle_encoder.h"
#include "worker/models/voxel_encoders/voxel_encoder.h"

namespace ddp3d::testing {

class TinyVoxelEncoderImpl : public models::VoxelEncoderImpl {
 public:
  TinyVoxelEncoderImpl(std::int64_t in_channels, std::int64_t out_channels);
  at::Tensor forward(const at::Tensor& voxels, const at::Tensor& num_points,
                     const at::Tensor& coors) override;

  static inline int builds = 0;
  static inline int forwards = 0;

 private:
  torch::nn::Linear linear_{nullptr};
};

class TinyScatterImpl : public models::MiddleEncoderImpl {
 public:
  TinyScatterImpl(std::int64_t in_channels, std::array<std::int64_t, 2> output_shape);
  at::Tensor forward(const at::Tensor& voxel_features, const at::Tensor& coors,
                     std::int64_t batch_size) override;

  static inline int builds = 0;
  static inline int forwards = 0;

 private:
  std::int64_t channels_;
  std::array<std::int64_t, 2> shape_;
};

// Registers voxel_encoder "TinyVoxelEncoder" (in_channels, feat_channels) and middle_encoder
// "TinyScatter" (in_channels, output_shape): schemas and factories.
void register_tiny_encoders();

}  // namespace ddp3d::testing
