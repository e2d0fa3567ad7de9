#include "tests/unit/models/tiny_backbone.h"

#include <ATen/ATen.h>

#include <string>

#include "worker/config/component_schemas.h"

namespace ddp3d::testing {

TinyBackboneImpl::TinyBackboneImpl(std::int64_t in_channels,
                                   const std::vector<std::int64_t>& out_channels) {
  ++builds;
  for (std::size_t i = 0; i < out_channels.size(); ++i) {
    const std::int64_t in = i == 0 ? in_channels : out_channels[i - 1];
    convs_.push_back(register_module(
        "conv" + std::to_string(i),
        torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out_channels[i], 3).stride(2).padding(1))));
  }
}

std::vector<at::Tensor> TinyBackboneImpl::forward(const at::Tensor& x) {
  ++forwards;
  std::vector<at::Tensor> features{x};
  for (torch::nn::Conv2d& conv : convs_)
    features.push_back(at::relu(conv->forward(features.back())));
  features.erase(features.begin());  // the input is no stage
  return features;
}

void register_tiny_backbone() {
  using S = config::Schema;
  config::component_schemas().add(
      "backbone", "TinyBackbone",
      {{"in_channels", S::integer().min(1).def(64)},
       {"out_channels", S::list(S::integer().min(1)).min_length(1).required()}});
  models::backbone_registry().add("TinyBackbone", [](const config::Config& cfg) {
    return std::make_shared<TinyBackboneImpl>(cfg.get<std::int64_t>("in_channels"),
                                              cfg.get<std::vector<std::int64_t>>("out_channels"));
  });
}

}  // namespace ddp3d::testing
