// A neck that no worker library has, for plugin_parts_test: every stage resized to the first
// one's size (bilinear), a 1×1 conv each to its out_channels, concatenated. It counts its
// builds and forwards, so a test can tell that it, not SECONDFPN, ran.
#pragma once

#include <torch/nn/modules/conv.h>

#include <cstdint>
#include <vector>

#include "worker/models/necks/neck.h"

namespace ddp3d::testing {

class TinyNeckImpl : public models::NeckImpl {
 public:
  TinyNeckImpl(const std::vector<std::int64_t>& in_channels,
               const std::vector<std::int64_t>& out_channels);
  at::Tensor forward(const std::vector<at::Tensor>& stages) override;

  static inline int builds = 0;
  static inline int forwards = 0;

 private:
  std::vector<torch::nn::Conv2d> convs_;
};

// Registers neck "TinyNeck": its schema (in_channels, out_channels) in
// config::component_schemas() and its factory in models::neck_registry().
void register_tiny_neck();

}  // namespace ddp3d::testing
