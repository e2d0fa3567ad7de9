// BatchNorm options from mmdet3d's norm_cfg (eps 1e-3, momentum 0.01 in PointPillars), shared by
// the voxel encoder, the backbone and the neck.
#pragma once

#include <torch/nn/options/batchnorm.h>

#include <cstdint>

#include "worker/models/pointpillars_options.h"

namespace ddp3d::models {

inline torch::nn::BatchNormOptions batch_norm_options(int64_t channels, const NormCfg& cfg) {
  return torch::nn::BatchNormOptions(channels).eps(cfg.eps).momentum(cfg.momentum);
}

}  // namespace ddp3d::models
