// Autocast for one forward pass (mmengine's AmpOptimWrapper.optim_context): while alive, ops
// on `device` run in bf16/fp16 where autocast allows; restores the previous autocast state.
#pragma once

#include <c10/core/DeviceType.h>
#include <c10/core/ScalarType.h>

namespace ddp3d::engine {

// The dtype a forward pass computes in where autocast allows.
enum class Precision { kFp32, kFp16, kBf16 };

class AutocastScope {
 public:
  // kFp32: does nothing.
  AutocastScope(Precision precision, c10::DeviceType device);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  c10::DeviceType device_;
  bool active_ = false;
  bool prev_enabled_ = false;
  c10::ScalarType prev_dtype_ = c10::kFloat;
};

}  // namespace ddp3d::engine
