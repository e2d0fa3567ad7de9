// mmengine's EMAHook: an exponential moving average of the model's parameters, used for
// validation (swapped in before it, swapped back after). Updated after every optimizer step
// from begin_iter on, every `interval` steps:
//   ema = (1 - momentum) * ema + momentum * param      (the first update copies)
// Buffers (BatchNorm statistics) are copied, as mmengine does without update_buffers. Under
// DDP every rank holds the same parameters after a step, so every rank computes the same EMA.
// Checkpoints hold the averaged weights as the model's (so `ddp3d test` evaluates them, as
// mmengine's swapped state_dict does) and the trained ones under the hook's keys
// ("ema.param.<i>", "ema.updates"); a resume swaps them back and continues exactly.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "worker/engine/hook.h"

namespace ddp3d::engine {

struct EmaHookOptions {
  double momentum = 0.0002;
  std::int64_t interval = 1;
  std::int64_t begin_iter = 0;
};

class EmaHook final : public Hook {
 public:
  // Throws std::invalid_argument for momentum outside (0, 1] or interval < 1.
  EmaHook(Model& model, EmaHookOptions options);

  void after_train_iter(LoopContext& loop, TrainIter& iter) override;
  void before_val(LoopContext& loop) override;
  void after_val(LoopContext& loop, const ValResult& result) override;
  void before_save_checkpoint(LoopContext& loop, TrainingState& state) override;
  void after_save_checkpoint(LoopContext& loop, const SavedCheckpoint& saved) override;
  void after_load_checkpoint(LoopContext& loop, const TrainingState& state) override;

  // The averaged parameters, in model.parameters() order (empty before the first update).
  const std::vector<at::Tensor>& averaged() const { return ema_; }
  std::int64_t updates() const { return updates_; }

 private:
  void swap_in_or_out();

  Model& model_;
  EmaHookOptions options_;
  std::vector<at::Tensor> ema_;
  std::int64_t updates_ = 0;
  bool swapped_ = false;
};

}  // namespace ddp3d::engine
