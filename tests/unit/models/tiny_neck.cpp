#include "tests/unit/models/tiny_neck.h"

#include <ATen/ATen.h>

#include <string>

#include "worker/config/component_schemas.h"

namespace ddp3d::testing {

TinyNeckImpl::TinyNeckImpl(const std::vector<std::int64_t>& in_channels,
                           const std::vector<std::int64_t>& out_channels) {
  ++builds;
  TORCH_CHECK(in_channels.size() == out_channels.size(), "TinyNeck: one out_channels per stage");
  for (std::size_t i = 0; i < in_channels.size(); ++i) {
    convs_.push_back(register_module(
        "conv" + std::to_string(i),
        torch::nn::Conv2d(torch::nn::Conv2dOptions(in_channels[i], out_channels[i], 1))));
  }
}

at::Tensor TinyNeckImpl::forward(const std::vector<at::Tensor>& stages) {
  ++forwards;
  TORCH_CHECK(stages.size() == convs_.size(), "TinyNeck: one feature map per stage");
  std::vector<at::Tensor> out;
  const std::vector<std::int64_t> size{stages[0].size(2), stages[0].size(3)};
  for (std::size_t i = 0; i < stages.size(); ++i) {
    const at::Tensor resized =
        i == 0 ? stages[i] : at::upsample_bilinear2d(stages[i], size, /*align_corners=*/false);
    out.push_back(at::relu(convs_[i]->forward(resized)));
  }
  return at::cat(out, 1);
}

void register_tiny_neck() {
  using S = config::Schema;
  config::component_schemas().add(
      "neck", "TinyNeck",
      {{"in_channels", S::list(S::integer().min(1)).min_length(1).required()},
       {"out_channels", S::list(S::integer().min(1)).min_length(1).required()}});
  models::neck_registry().add("TinyNeck", [](const config::Config& cfg) {
    return std::make_shared<TinyNeckImpl>(cfg.get<std::vector<std::int64_t>>("in_channels"),
                                          cfg.get<std::vector<std::int64_t>>("out_channels"));
  });
}

}  // namespace ddp3d::testing
