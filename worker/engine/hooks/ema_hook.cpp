#include "worker/engine/hooks/ema_hook.h"

#include <torch/nn/module.h>
#include <torch/utils.h>

#include <stdexcept>
#include <string>

namespace ddp3d::engine {

EmaHook::EmaHook(Model& model, EmaHookOptions options) : model_(model), options_(options) {
  if (!(options_.momentum > 0 && options_.momentum <= 1))
    throw std::invalid_argument("EMAHook: momentum must be in (0, 1]");
  if (options_.interval < 1) throw std::invalid_argument("EMAHook: interval must be >= 1");
}

void EmaHook::after_train_iter(LoopContext& loop, TrainIter& iter) {
  if (!iter.update.stepped) return;  // no new weights (accumulating, skipped or fp16 overflow)
  const std::int64_t done = loop.progress().global_iter + 1;
  if (done <= options_.begin_iter || done % options_.interval != 0) return;
  torch::NoGradGuard no_grad;
  const std::vector<at::Tensor> params = model_.parameters();
  if (ema_.empty()) {
    for (const at::Tensor& p : params) ema_.push_back(p.detach().clone());
  } else {
    for (std::size_t i = 0; i < params.size(); ++i)
      ema_[i].lerp_(params[i].detach(), options_.momentum);
  }
  ++updates_;
}

void EmaHook::swap_in_or_out() {
  torch::NoGradGuard no_grad;
  const std::vector<at::Tensor> params = model_.parameters();
  for (std::size_t i = 0; i < params.size(); ++i) {
    at::Tensor held = params[i].detach().clone();
    params[i].detach().copy_(ema_[i]);
    ema_[i].copy_(held);
  }
  swapped_ = !swapped_;
}

void EmaHook::before_val(LoopContext& /*loop*/) {
  if (!ema_.empty() && !swapped_) swap_in_or_out();
}

void EmaHook::after_val(LoopContext& /*loop*/, const ValResult& /*result*/) {
  if (swapped_) swap_in_or_out();
}

void EmaHook::before_save_checkpoint(LoopContext& /*loop*/, TrainingState& state) {
  if (ema_.empty()) return;
  if (!swapped_) swap_in_or_out();  // the model saves the average; ema_ holds the trained
  for (std::size_t i = 0; i < ema_.size(); ++i)
    state.hook_tensors["ema.param." + std::to_string(i)] = ema_[i].clone();  // not an alias
  state.hook_tensors["ema.updates"] = at::scalar_tensor(static_cast<double>(updates_), at::kDouble);
}

void EmaHook::after_save_checkpoint(LoopContext& /*loop*/, const SavedCheckpoint& /*saved*/) {
  if (swapped_) swap_in_or_out();
}

void EmaHook::after_load_checkpoint(LoopContext& /*loop*/, const TrainingState& state) {
  const auto updates = state.hook_tensors.find("ema.updates");
  if (updates == state.hook_tensors.end()) return;  // saved without this hook: start anew
  torch::NoGradGuard no_grad;
  const std::vector<at::Tensor> params = model_.parameters();
  ema_.clear();
  for (std::size_t i = 0; i < params.size(); ++i) {
    const auto trained = state.hook_tensors.find("ema.param." + std::to_string(i));
    if (trained == state.hook_tensors.end() || !trained->second.sizes().equals(params[i].sizes())) {
      throw std::runtime_error(
          "EMAHook: the checkpoint's averaged weights do not fit the model "
          "(parameter " +
          std::to_string(i) + ")");
    }
    // The model was loaded with the average; put the trained weights back.
    ema_.push_back(params[i].detach().clone());
    params[i].detach().copy_(trained->second);
  }
  updates_ = static_cast<std::int64_t>(updates->second.item<double>());
}

}  // namespace ddp3d::engine
