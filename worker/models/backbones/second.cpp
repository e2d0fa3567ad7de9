#include "worker/models/backbones/second.h"

#include <torch/nn/init.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>

#include "worker/models/layers/norm_layer.h"

namespace ddp3d::models {

SECONDImpl::SECONDImpl(const SECONDOptions& options) {
  blocks_ = register_module("blocks", torch::nn::ModuleList());
  int64_t in = options.in_channels;
  for (size_t i = 0; i < options.out_channels.size(); ++i) {
    const int64_t out = options.out_channels[i];
    torch::nn::Sequential block;
    auto add_conv = [&](int64_t cin, int64_t stride) {
      auto conv = torch::nn::Conv2d(
          torch::nn::Conv2dOptions(cin, out, 3).stride(stride).padding(1).bias(false));
      // mmdet3d's init_cfg: Kaiming (fan_out, relu, normal) for Conv2d.
      torch::nn::init::kaiming_normal_(conv->weight, 0.0, torch::kFanOut, torch::kReLU);
      block->push_back(conv);
      block->push_back(build_norm_layer(options.norm_cfg, out, 2));
      block->push_back(torch::nn::ReLU());
    };
    add_conv(in, options.layer_strides[i]);
    for (int64_t j = 0; j < options.layer_nums[i]; ++j) add_conv(out, 1);
    blocks_->push_back(block);
    in = out;
  }
}

std::vector<at::Tensor> SECONDImpl::forward(const at::Tensor& x) {
  std::vector<at::Tensor> outs;
  at::Tensor y = x;
  for (const auto& block : *blocks_) {
    y = block->as<torch::nn::Sequential>()->forward(y);
    outs.push_back(y);
  }
  return outs;
}

}  // namespace ddp3d::models
