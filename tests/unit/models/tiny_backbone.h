// A backbone that no worker library has, for plugin_backbone_test: three strided 3×3 convs
// (stride 2 each, ReLU, no norm), one output per stage, so SECONDFPN fuses it like SECOND's.
// It counts its builds and forwards, so a test can tell that it, not SECOND, ran.
#pragma once

#include <torch/nn/modules/conv.h>

#include <cstdint>
#include <vector>

#include "worker/models/backbones/backbone.h"

namespace ddp3d::testing {

class TinyBackboneImpl : public models::BackboneImpl {
 public:
  TinyBackboneImpl(std::int64_t in_channels, const std::vector<std::int64_t>& out_channels);
  std::vector<at::Tensor> forward(const at::Tensor& x) override;

  static inline int builds = 0;
  static inline int forwards = 0;

 private:
  std::vector<torch::nn::Conv2d> convs_;
};

// Registers backbone "TinyBackbone": its schema (in_channels, out_channels) in
// config::component_schemas() and its factory in models::backbone_registry().
void register_tiny_backbone();

}  // namespace ddp3d::testing
