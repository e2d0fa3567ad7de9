#include "worker/models/voxel_encoders/pillar_feature_net.h"

#include <ATen/ATen.h>

#include <stdexcept>

#include "worker/models/layers/norm_layer.h"

namespace ddp3d::models {

at::Tensor padding_mask(const at::Tensor& num_points, int64_t max_points) {
  const at::Tensor slots = at::arange(max_points, num_points.options().dtype(at::kLong));
  return slots.unsqueeze(0) < num_points.to(at::kLong).unsqueeze(1);
}

PFNLayerImpl::PFNLayerImpl(int64_t in_channels, int64_t out_channels, const NormCfg& norm_cfg,
                           bool last_layer, std::string mode)
    : last_layer_(last_layer),
      mode_(std::move(mode)),
      // Inner layers concatenate the pooled feature back onto every point: half the width each.
      units_(last_layer ? out_channels : out_channels / 2) {
  linear_ = register_module(
      "linear", torch::nn::Linear(torch::nn::LinearOptions(in_channels, units_).bias(false)));
  norm_ = build_norm_layer(norm_cfg, units_, 1);
  register_module("norm", norm_.ptr());
}

at::Tensor PFNLayerImpl::forward(const at::Tensor& features, const at::Tensor& num_points) {
  const int64_t m = features.size(0);
  const int64_t p = features.size(1);
  at::Tensor x = linear_->forward(features);
  // BN1d over every (pillar, point) sample of each channel, as mmdet3d's permute-BN-permute.
  x = norm_.forward(x.reshape({m * p, units_})).reshape({m, p, units_});
  x = at::relu(x);
  at::Tensor pooled;
  if (mode_ == "max") {
    pooled = std::get<0>(x.max(1, /*keepdim=*/true));
  } else {
    pooled = x.sum(1, /*keepdim=*/true) / num_points.to(x.dtype()).view({-1, 1, 1});
  }
  if (last_layer_) return pooled;
  return at::cat({x, pooled.expand({m, p, units_})}, 2);
}

PillarFeatureNetImpl::PillarFeatureNetImpl(const PillarFeatureNetOptions& options)
    : options_(options) {
  decorated_channels_ = options.in_channels + (options.with_cluster_center ? 3 : 0) +
                        (options.with_voxel_center ? 3 : 0) + (options.with_distance ? 1 : 0);
  pfn_layers_ = register_module("pfn_layers", torch::nn::ModuleList());
  int64_t in = decorated_channels_;
  const auto& feats = options.feat_channels;
  for (size_t i = 0; i < feats.size(); ++i) {
    pfn_layers_->push_back(
        PFNLayer(in, feats[i], options.norm_cfg, i + 1 == feats.size(), options.mode));
    in = feats[i];
  }
}

at::Tensor PillarFeatureNetImpl::decorate(const at::Tensor& voxels, const at::Tensor& num_points,
                                          const at::Tensor& coors) const {
  TORCH_CHECK(voxels.dim() == 3 && voxels.size(2) == options_.in_channels,
              "PillarFeatureNet: voxels must be [M, P, ", options_.in_channels, "], got ",
              voxels.sizes());
  TORCH_CHECK(num_points.dim() == 1 && num_points.size(0) == voxels.size(0),
              "PillarFeatureNet: num_points must be [M] with M = ", voxels.size(0), ", got ",
              num_points.sizes());
  TORCH_CHECK(coors.dim() == 2 && coors.size(0) == voxels.size(0) && coors.size(1) == 4,
              "PillarFeatureNet: coors must be [M, 4] (batch, z, y, x), got ", coors.sizes());
  const at::Tensor counts = num_points.to(voxels.dtype()).clamp_min(1).view({-1, 1, 1});
  const at::Tensor mask =
      padding_mask(num_points, voxels.size(1)).unsqueeze(2).to(voxels.dtype());  // [M, P, 1]
  // Voxelization pads with zeros; masking first keeps the pillar means right even if not.
  const at::Tensor points = voxels * mask;
  const at::Tensor xyz = points.narrow(2, 0, 3);
  std::vector<at::Tensor> parts;

  at::Tensor f_cluster;
  if (options_.with_cluster_center) {
    const at::Tensor mean = xyz.sum(1, /*keepdim=*/true) / counts;
    f_cluster = xyz - mean;
  }
  at::Tensor f_center;
  if (options_.with_voxel_center) {
    const auto& vs = options_.voxel_size;
    const auto& pcr = options_.point_cloud_range;
    // coors columns are (batch, z, y, x): x ↔ 3, y ↔ 2, z ↔ 1.
    const at::Tensor cell =
        coors.index_select(1, at::tensor({3, 2, 1}, coors.options().dtype(at::kLong)))
            .to(voxels.dtype());
    const at::Tensor size = at::tensor({vs[0], vs[1], vs[2]}, voxels.options());
    const at::Tensor origin =
        at::tensor({pcr[0] + vs[0] / 2, pcr[1] + vs[1] / 2, pcr[2] + vs[2] / 2}, voxels.options());
    const at::Tensor centre = cell * size + origin;  // [M, 3]
    f_center = xyz - centre.unsqueeze(1);
  }
  at::Tensor points_dist;
  if (options_.with_distance) points_dist = xyz.norm(2, {2}, /*keepdim=*/true);

  // Legacy mmdet3d writes the centre offsets over the raw x, y, z (see the options comment).
  if (options_.with_voxel_center && options_.legacy) {
    parts.push_back(at::cat({f_center, points.narrow(2, 3, points.size(2) - 3)}, 2));
  } else {
    parts.push_back(points);
  }
  if (f_cluster.defined()) parts.push_back(f_cluster);
  if (f_center.defined()) parts.push_back(f_center);
  if (points_dist.defined()) parts.push_back(points_dist);
  at::Tensor features = at::cat(parts, 2);
  // Decorations of padding slots are not zero (offsets from a centre): zero them again.
  return features * mask;
}

at::Tensor PillarFeatureNetImpl::forward(const at::Tensor& voxels, const at::Tensor& num_points,
                                         const at::Tensor& coors) {
  at::Tensor x = decorate(voxels, num_points, coors);
  for (const auto& layer : *pfn_layers_) x = layer->as<PFNLayer>()->forward(x, num_points);
  return x.squeeze(1);
}

}  // namespace ddp3d::models
