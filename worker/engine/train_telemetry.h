// What the training loop reports while it runs, for whoever watches it: the worker's
// Prometheus metrics (prometheus_telemetry.h), a recorder in tests. The runner calls it on its
// own thread, so implementations must be cheap and never block (no I/O): a step must not wait
// on an observer.
#pragma once

#include <cstdint>
#include <optional>

namespace ddp3d::engine {

// One training iteration on this rank.
struct StepRecord {
  std::int64_t epoch = 0;     // 1-based epoch the iteration belongs to (as in the logs)
  std::int64_t samples = 0;   // samples this rank processed in the iteration
  double step_seconds = 0.0;  // wall time of the whole iteration, data loading included
  double lr = 0.0;            // learning rate the iteration used (first param group)
  // Time the iteration blocked waiting for DDP's gradient all-reduces after its own backward
  // finished; nullopt when it did not synchronise (one process, or a no_sync accumulation step).
  std::optional<double> allreduce_seconds;
};

class TrainTelemetry {
 public:
  virtual ~TrainTelemetry() = default;
  // Training starts (or resumes) and this process will run `planned_iters` iterations.
  virtual void on_start(std::int64_t planned_iters) = 0;
  virtual void on_step(const StepRecord& step) = 0;
  // This rank's mean total loss over the last logging window (default_hooks.logger.interval
  // iterations). The runner reports it where it reads losses back from the device anyway, so
  // watching the loss costs no extra device synchronisation per step.
  virtual void on_loss(double mean_loss) = 0;
};

}  // namespace ddp3d::engine
