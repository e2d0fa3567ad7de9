// ToyRegressor: an MLP (Linear-ReLU stack, no batch norm) trained with mean squared error on
// the batch fields "inputs" [B, in_features] -> "targets" [B, out_features]. With
// `unused_branch` it also owns a Linear that never enters the loss, to exercise DDP's
// find_unused_parameters.
#pragma once

#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/linear.h>

#include <cstdint>
#include <vector>

#include "worker/engine/model.h"

namespace ddp3d::engine {

class ToyRegressor : public Model {
 public:
  ToyRegressor(std::int64_t in_features, const std::vector<std::int64_t>& hidden,
               std::int64_t out_features, bool unused_branch = false);
  at::Tensor forward(const at::Tensor& inputs);
  LossMap forward_train(const Batch& batch) override;
  // One result per sample: {"pred": [out_dim]}.
  std::vector<Sample> predict(const Batch& batch) override;

 private:
  torch::nn::Sequential layers_;
  torch::nn::Linear unused_{nullptr};
};

}  // namespace ddp3d::engine
