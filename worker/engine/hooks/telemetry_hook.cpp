#include "worker/engine/hooks/telemetry_hook.h"

namespace ddp3d::engine {

void TelemetryHook::before_train(LoopContext& loop) {
  const LoopProgress& p = loop.progress();
  telemetry_.on_start(p.max_iters() - p.global_iter);
}

void TelemetryHook::after_train_iter(LoopContext& loop, TrainIter& iter) {
  StepRecord step;
  step.epoch = loop.progress().epoch + 1;
  step.samples = !iter.sample_indices.empty()
                     ? static_cast<std::int64_t>(iter.sample_indices.size())
                     : (iter.batch != nullptr ? iter.batch->size : 0);
  step.step_seconds = iter.iter_seconds;
  step.lr = iter.lr;
  step.allreduce_seconds = iter.update.allreduce_wait_s;
  telemetry_.on_step(step);
  if (iter.window_mean_loss) telemetry_.on_loss(*iter.window_mean_loss);
}

}  // namespace ddp3d::engine
