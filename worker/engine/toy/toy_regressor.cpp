#include "worker/engine/toy/toy_regressor.h"

#include <ATen/ATen.h>
#include <torch/nn/modules/activation.h>

#include <stdexcept>

namespace ddp3d::engine {

ToyRegressor::ToyRegressor(std::int64_t in_features, const std::vector<std::int64_t>& hidden,
                           std::int64_t out_features, bool unused_branch) {
  if (in_features <= 0 || out_features <= 0) {
    throw std::invalid_argument("ToyRegressor: in_features and out_features must be positive");
  }
  std::int64_t width = in_features;
  for (std::int64_t h : hidden) {
    layers_->push_back(torch::nn::Linear(width, h));
    layers_->push_back(torch::nn::ReLU());
    width = h;
  }
  layers_->push_back(torch::nn::Linear(width, out_features));
  register_module("layers", layers_);
  if (unused_branch) unused_ = register_module("unused", torch::nn::Linear(in_features, 1));
}

at::Tensor ToyRegressor::forward(const at::Tensor& inputs) {
  return layers_->forward(inputs);
}

LossMap ToyRegressor::forward_train(const Batch& batch) {
  const at::Tensor pred = forward(batch.get("inputs"));
  return {{"loss", at::mse_loss(pred, batch.get("targets"))}};
}

std::vector<Sample> ToyRegressor::predict(const Batch& batch) {
  const at::Tensor pred = forward(batch.get("inputs"));
  std::vector<Sample> out(static_cast<std::size_t>(batch.size));
  for (std::int64_t i = 0; i < batch.size; ++i) out[i].tensors["pred"] = pred[i];
  return out;
}

}  // namespace ddp3d::engine
