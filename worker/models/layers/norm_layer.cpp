#include "worker/models/layers/norm_layer.h"

#include <torch/nn/modules/batchnorm.h>

#include <stdexcept>
#include <string>

#include "worker/dist/sync_batch_norm.h"

namespace ddp3d::models {

torch::nn::AnyModule build_norm_layer(const NormCfg& cfg, int64_t num_features, int dims) {
  const auto options =
      torch::nn::BatchNormOptions(num_features).eps(cfg.eps).momentum(cfg.momentum);
  if (cfg.type == NormType::kSyncBatchNorm) {
    return torch::nn::AnyModule(dist::SyncBatchNorm(options));
  }
  switch (dims) {
    case 1:
      return torch::nn::AnyModule(torch::nn::BatchNorm1d(options));
    case 2:
      return torch::nn::AnyModule(torch::nn::BatchNorm2d(options));
    default:
      throw std::invalid_argument("build_norm_layer: dims must be 1 or 2, got " +
                                  std::to_string(dims));
  }
}

}  // namespace ddp3d::models
