// PillarFeatureNet (PointPillars, Lang et al. 2019; mmdet3d's voxel_encoder): decorates every
// point of a pillar with its offset from the pillar's point mean and from the pillar's
// geometric centre, runs a shared Linear + BN1d + ReLU per point and pools over the points.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/container/any.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/linear.h>

#include "worker/models/pointpillars/options.h"
#include "worker/models/voxel_encoders/voxel_encoder.h"

namespace ddp3d::models {

// One PFN layer: Linear(no bias) → BN1d over all points → ReLU → pool over the pillar's points.
// Inner layers return [point features, pooled feature] concatenated per point.
class PFNLayerImpl : public torch::nn::Module {
 public:
  PFNLayerImpl(int64_t in_channels, int64_t out_channels, const NormCfg& norm_cfg, bool last_layer,
               std::string mode);
  // features [M, P, C_in], num_points [M] → [M, 1, C_out] (last layer) or [M, P, C_out].
  at::Tensor forward(const at::Tensor& features, const at::Tensor& num_points);

 private:
  bool last_layer_;
  std::string mode_;
  int64_t units_;
  torch::nn::Linear linear_{nullptr};
  torch::nn::AnyModule norm_;  // BatchNorm1d or SyncBatchNorm (norm_cfg.type)
};
TORCH_MODULE(PFNLayer);

class PillarFeatureNetImpl : public VoxelEncoderImpl {
 public:
  explicit PillarFeatureNetImpl(const PillarFeatureNetOptions& options);

  // voxels [M, P, in_channels] (points padded with zeros), num_points [M] (>= 1),
  // coors [M, 4] = (batch, z, y, x) → pillar features [M, feat_channels[-1]].
  at::Tensor forward(const at::Tensor& voxels, const at::Tensor& num_points,
                     const at::Tensor& coors) override;

  // The per-point input of the first PFN layer, [M, P, decorated_channels()], padding zeroed.
  at::Tensor decorate(const at::Tensor& voxels, const at::Tensor& num_points,
                      const at::Tensor& coors) const;
  int64_t decorated_channels() const { return decorated_channels_; }

 private:
  PillarFeatureNetOptions options_;
  int64_t decorated_channels_;
  torch::nn::ModuleList pfn_layers_;
};
TORCH_MODULE(PillarFeatureNet);

// [M, P] bool: true where point p of pillar m is a real point (p < num_points[m]).
at::Tensor padding_mask(const at::Tensor& num_points, int64_t max_points);

}  // namespace ddp3d::models
