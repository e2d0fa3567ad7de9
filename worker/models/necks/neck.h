// What a single-stage detector needs of its neck: one BEV feature map, for the head, from the
// backbone's stages. SECONDFPN is one; neck_registry() builds any registered one by its config
// `type`.
#pragma once

#include <torch/nn/module.h>

#include <functional>
#include <memory>
#include <vector>

#include "worker/config/registry.h"

namespace ddp3d::models {

class NeckImpl : public torch::nn::Module {
 public:
  // One [B, in_channels[i], H_i, W_i] per backbone stage → [B, Σ out_channels, H, W] (the
  // channels PointPillars' connection checks expect the head to read).
  virtual at::Tensor forward(const std::vector<at::Tensor>& stages) = 0;
};

using NeckPtr = std::shared_ptr<NeckImpl>;
// Builds the neck when the detector reaches it (parameters are initialised in module order,
// so the neck is made between the backbone and the head, whoever provides it).
using NeckFactory = std::function<NeckPtr()>;

// model.neck types: SECONDFPN, and what a test or another library adds (with its schema in
// config::component_schemas(), kind "neck").
config::Registry<NeckImpl>& neck_registry();

}  // namespace ddp3d::models
