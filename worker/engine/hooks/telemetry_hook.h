// Feeds a TrainTelemetry observer (the worker's Prometheus metrics, prometheus_telemetry.h)
// from the loop: the iterations this process is set to run, one StepRecord per iteration and, on
// the iterations LoggerHook logs, this rank's window mean loss. Reads TrainIter::iter_seconds and
// window_mean_loss, so register it after IterTimerHook and LoggerHook.
#pragma once

#include "worker/engine/hook.h"
#include "worker/engine/train_telemetry.h"

namespace ddp3d::engine {

class TelemetryHook final : public Hook {
 public:
  // `telemetry` must outlive the hook.
  explicit TelemetryHook(TrainTelemetry& telemetry) : telemetry_(telemetry) {}

  void before_train(LoopContext& loop) override;
  void after_train_iter(LoopContext& loop, TrainIter& iter) override;

 private:
  TrainTelemetry& telemetry_;
};

}  // namespace ddp3d::engine
