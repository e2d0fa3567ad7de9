#include "tests/unit/models/tiny_head.h"

#include <ATen/ATen.h>

#include "worker/config/component_schemas.h"

namespace ddp3d::testing {

TinyHeadImpl::TinyHeadImpl(std::int64_t in_channels, std::int64_t num_classes) {
  ++builds;
  conv_ = register_module("conv_heatmap",
                          torch::nn::Conv2d(torch::nn::Conv2dOptions(in_channels, num_classes, 1)));
}

models::LossMap TinyHeadImpl::loss(const at::Tensor& features,
                                   const std::vector<at::Tensor>& gt_boxes,
                                   const std::vector<at::Tensor>& /*gt_labels*/) {
  ++losses;
  TORCH_CHECK(static_cast<std::int64_t>(gt_boxes.size()) == features.size(0),
              "TinyHead: one gt_boxes entry per sample");
  return {{"loss_heatmap", at::sigmoid(conv_->forward(features)).pow(2).mean()}};
}

std::vector<models::Detections> TinyHeadImpl::predict(const at::Tensor& features) {
  ++predictions;
  const auto opts = features.options();
  std::vector<models::Detections> out;
  for (std::int64_t b = 0; b < features.size(0); ++b)
    out.push_back(
        {at::zeros({0, 7}, opts), at::zeros({0}, opts), at::zeros({0}, opts.dtype(at::kLong))});
  return out;
}

void register_tiny_head() {
  using S = config::Schema;
  config::component_schemas().add("bbox_head", "TinyHead",
                                  {{"in_channels", S::integer().min(1).required()},
                                   {"num_classes", S::integer().min(1).required()}});
  models::head_registry().add("TinyHead", [](const config::Config& model) {
    return std::make_shared<TinyHeadImpl>(model.get<std::int64_t>("bbox_head.in_channels"),
                                          model.get<std::int64_t>("bbox_head.num_classes"));
  });
}

}  // namespace ddp3d::testing
