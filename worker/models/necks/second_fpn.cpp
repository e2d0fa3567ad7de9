#include "worker/models/necks/second_fpn.h"

#include <ATen/ATen.h>
#include <torch/nn/init.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>

#include <cmath>

#include "worker/models/layers/norm_layer.h"

namespace ddp3d::models {

SECONDFPNImpl::SECONDFPNImpl(const SECONDFPNOptions& options) {
  deblocks_ = register_module("deblocks", torch::nn::ModuleList());
  for (size_t i = 0; i < options.in_channels.size(); ++i) {
    const int64_t in = options.in_channels[i];
    const int64_t out = options.out_channels[i];
    const double stride = options.upsample_strides[i];
    torch::nn::Sequential block;
    if (stride > 1 || (stride == 1 && !options.use_conv_for_no_stride)) {
      const auto k = static_cast<int64_t>(stride);
      auto deconv = torch::nn::ConvTranspose2d(
          torch::nn::ConvTranspose2dOptions(in, out, k).stride(k).bias(false));
      // mmdet3d's init_cfg: Kaiming for ConvTranspose2d (fan_out, relu, normal).
      torch::nn::init::kaiming_normal_(deconv->weight, 0.0, torch::kFanOut, torch::kReLU);
      block->push_back(deconv);
    } else {
      // Downsampling branch: stride 1/k becomes a k×k conv of stride k.
      const auto k = static_cast<int64_t>(std::lround(1.0 / stride));
      auto conv = torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, k).stride(k).bias(false));
      torch::nn::init::kaiming_normal_(conv->weight, 0.0, torch::kFanOut, torch::kReLU);
      block->push_back(conv);
    }
    block->push_back(build_norm_layer(options.norm_cfg, out, 2));
    block->push_back(torch::nn::ReLU());
    deblocks_->push_back(block);
  }
}

at::Tensor SECONDFPNImpl::forward(const std::vector<at::Tensor>& features) {
  TORCH_CHECK(features.size() == deblocks_->size(), "SECONDFPN: expected ", deblocks_->size(),
              " feature maps, got ", features.size());
  std::vector<at::Tensor> ups;
  ups.reserve(features.size());
  for (size_t i = 0; i < features.size(); ++i) {
    ups.push_back(deblocks_[i]->as<torch::nn::Sequential>()->forward(features[i]));
  }
  return ups.size() == 1 ? ups[0] : at::cat(ups, 1);
}

}  // namespace ddp3d::models
