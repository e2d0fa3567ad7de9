// TrainTelemetry as Prometheus metrics: the worker's training families (docs/metrics.md,
// "Worker metrics"), every series labelled job_name and rank so that one Prometheus can hold
// many jobs and every rank of each.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <cstdint>
#include <string>
#include <vector>

#include "worker/engine/train_telemetry.h"

namespace ddp3d::telemetry {

struct TelemetryLabels {
  std::string job_name = "local";  // DDP3D_JOB, or "local" outside the operator
  std::string rank = "0";          // the global RANK
};

// Bucket upper bounds (seconds) of ddp3d_step_seconds: 5 ms doubling to ~164 s.
std::vector<double> step_seconds_buckets();
// Bucket upper bounds (seconds) of ddp3d_allreduce_seconds: 0.1 ms doubling to ~3.3 s.
std::vector<double> allreduce_seconds_buckets();

class PrometheusTrainTelemetry final : public engine::TrainTelemetry {
 public:
  // Registers the families in `registry` (which must outlive this) and creates this rank's
  // series, so every family but the loss (see on_loss) is present from the first scrape.
  PrometheusTrainTelemetry(prometheus::Registry& registry, const TelemetryLabels& labels);

  void on_start(std::int64_t planned_iters) override;
  void on_step(const engine::StepRecord& step) override;
  void on_loss(double mean_loss) override;

 private:
  prometheus::Labels labels_;
  prometheus::Counter& steps_;
  prometheus::Gauge& max_steps_;
  prometheus::Counter& samples_;
  prometheus::Family<prometheus::Gauge>& loss_family_;
  prometheus::Gauge* loss_ = nullptr;  // set by the first on_loss (runner thread only)
  prometheus::Gauge& epoch_;
  prometheus::Gauge& lr_;
  prometheus::Histogram& step_seconds_;
  prometheus::Histogram& allreduce_seconds_;
};

}  // namespace ddp3d::telemetry
