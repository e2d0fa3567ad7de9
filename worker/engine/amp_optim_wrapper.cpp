#include "worker/engine/amp_optim_wrapper.h"

#include <stdexcept>
#include <vector>

#include "worker/engine/model.h"

namespace ddp3d::engine {

AmpOptimWrapper::AmpOptimWrapper(Model& model, const OptimWrapperOptions& options,
                                 const AmpOptions& amp)
    : OptimWrapper(model, options), amp_(amp), scaler_(amp.loss_scaler) {
  if (amp.dtype == Precision::kFp32) {
    throw std::invalid_argument("AmpOptimWrapper: dtype must be float16 or bfloat16");
  }
}

LossScaleState AmpOptimWrapper::loss_scale_state() const {
  if (amp_.dtype != Precision::kFp16) return {};
  return {.scale = scaler_.scale(), .growth_tracker = scaler_.growth_tracker()};
}

void AmpOptimWrapper::load_loss_scale_state(const LossScaleState& state) {
  if (amp_.dtype == Precision::kFp16 && state.scale > 0) {
    scaler_.load_state(state.scale, state.growth_tracker);
  }
}

at::Tensor AmpOptimWrapper::scale_loss(const at::Tensor& loss) {
  return amp_.dtype == Precision::kFp16 ? loss * scaler_.scale() : loss;
}

bool AmpOptimWrapper::prepare_step(UpdateResult& result) {
  if (amp_.dtype != Precision::kFp16) return true;
  std::vector<at::Tensor> grads;
  for (const at::Tensor& p : model().parameters()) grads.push_back(p.grad());
  // Gradients are already averaged, so every rank reaches the same verdict.
  const bool apply = scaler_.update(scaler_.unscale_and_check(grads));
  result.nonfinite_grads = !apply;
  return apply;
}

}  // namespace ddp3d::engine
