// mmengine's AmpOptimWrapper: the forward pass runs under autocast in float16 or bfloat16. With
// float16 the loss is scaled before backward (dynamic loss scaling, loss_scaler.h) and the
// gradients unscaled before clipping; a step whose gradients hold inf/NaN is skipped and the
// scale backs off. bfloat16 has float32's range and scales nothing.
#pragma once

#include "worker/engine/loss_scaler.h"
#include "worker/engine/optim_wrapper.h"

namespace ddp3d::engine {

struct AmpOptions {
  Precision dtype = Precision::kFp16;  // kFp16 or kBf16
  LossScalerOptions loss_scaler;       // used with kFp16 only
};

class AmpOptimWrapper : public OptimWrapper {
 public:
  // Throws std::invalid_argument for dtype kFp32 or a bad loss scaler.
  AmpOptimWrapper(Model& model, const OptimWrapperOptions& options, const AmpOptions& amp);

  AutocastScope autocast(c10::DeviceType device) const override {
    return AutocastScope(amp_.dtype, device);
  }
  LossScaleState loss_scale_state() const override;
  void load_loss_scale_state(const LossScaleState& state) override;

 protected:
  at::Tensor scale_loss(const at::Tensor& loss) override;
  bool prepare_step(UpdateResult& result) override;

 private:
  AmpOptions amp_;
  DynamicLossScaler scaler_;
};

}  // namespace ddp3d::engine
