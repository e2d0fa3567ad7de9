#include "worker/engine/loss_scaler.h"

#include <ATen/ATen.h>

#include <stdexcept>

namespace ddp3d::engine {

DynamicLossScaler::DynamicLossScaler(const LossScalerOptions& options)
    : options_(options), scale_(options.init_scale) {
  if (options.init_scale <= 0 || options.growth_factor <= 1 || options.backoff_factor <= 0 ||
      options.backoff_factor >= 1 || options.growth_interval < 1) {
    throw std::invalid_argument(
        "loss scaler: need init_scale > 0, growth_factor > 1, 0 < backoff_factor < 1, "
        "growth_interval >= 1");
  }
}

bool DynamicLossScaler::unscale_and_check(const std::vector<at::Tensor>& grads) const {
  bool found_inf = false;
  const double inv = 1.0 / scale_;
  for (const at::Tensor& g : grads) {
    if (!g.defined()) continue;
    g.mul_(inv);
    // One host sync per tensor; fine for the parameter counts we train.
    if (!at::isfinite(g).all().item<bool>()) found_inf = true;
  }
  return found_inf;
}

bool DynamicLossScaler::update(bool found_inf) {
  if (found_inf) {
    scale_ *= options_.backoff_factor;
    growth_tracker_ = 0;
    return false;
  }
  if (++growth_tracker_ >= options_.growth_interval) {
    scale_ *= options_.growth_factor;
    growth_tracker_ = 0;
  }
  return true;
}

void DynamicLossScaler::load_state(double scale, std::int64_t growth_tracker) {
  if (scale <= 0) throw std::invalid_argument("loss scaler: saved scale must be > 0");
  scale_ = scale;
  growth_tracker_ = growth_tracker;
}

}  // namespace ddp3d::engine
