// What PointPillars needs of a backbone: a module from the BEV canvas to one feature map per
// stage (the neck fuses them). SECOND is one; backbone_registry() builds any registered one by
// its config `type`.
#pragma once

#include <torch/nn/module.h>

#include <functional>
#include <memory>
#include <vector>

#include "worker/config/registry.h"

namespace ddp3d::models {

class BackboneImpl : public torch::nn::Module {
 public:
  // x [B, in_channels, H, W] → one [B, out_channels[i], H_i, W_i] per stage.
  virtual std::vector<at::Tensor> forward(const at::Tensor& x) = 0;
};

using BackbonePtr = std::shared_ptr<BackboneImpl>;
// Builds the backbone when the detector reaches it (parameters are initialised in module
// order, so the backbone is made between the scatter and the neck, whoever provides it).
using BackboneFactory = std::function<BackbonePtr()>;

// model.backbone types: SECOND, and what a test or another library adds (with its schema in
// config::component_schemas()).
config::Registry<BackboneImpl>& backbone_registry();

}  // namespace ddp3d::models
