// SECONDFPN (mmdet3d's neck for SECOND/PointPillars): brings every backbone stage to a common
// resolution with a transposed conv (or a strided conv when the stride is < 1), BN, ReLU,
// and concatenates them along channels.
#pragma once

#include <torch/nn/modules/container/modulelist.h>

#include <vector>

#include "worker/models/necks/neck.h"
#include "worker/models/pointpillars/options.h"

namespace ddp3d::models {

class SECONDFPNImpl : public NeckImpl {
 public:
  explicit SECONDFPNImpl(const SECONDFPNOptions& options);
  // One tensor per backbone stage → [B, Σ out_channels, H, W].
  at::Tensor forward(const std::vector<at::Tensor>& features) override;

 private:
  torch::nn::ModuleList deblocks_;
};
TORCH_MODULE(SECONDFPN);

}  // namespace ddp3d::models
