// SECOND backbone (Yan et al. 2018, as mmdet3d's `SECOND`): a stack of stages; each stage is a
// strided 3×3 conv followed by layer_nums[i] 3×3 convs, every conv with BN and ReLU. Returns
// every stage's output (the neck fuses them).
#pragma once

#include <torch/nn/modules/container/modulelist.h>

#include <vector>

#include "worker/models/backbones/backbone.h"
#include "worker/models/pointpillars/options.h"

namespace ddp3d::models {

class SECONDImpl : public BackboneImpl {
 public:
  explicit SECONDImpl(const SECONDOptions& options);
  // x [B, in_channels, H, W] → one [B, out_channels[i], H / Π strides[..i], ...] per stage.
  std::vector<at::Tensor> forward(const at::Tensor& x) override;

 private:
  torch::nn::ModuleList blocks_;
};
TORCH_MODULE(SECOND);

}  // namespace ddp3d::models
