#include "worker/telemetry/prometheus_telemetry.h"

#include "common/metrics/collection.h"

namespace ddp3d::telemetry {
namespace {

prometheus::Counter& counter(prometheus::Registry& registry, const char* name, const char* help,
                             const prometheus::Labels& labels) {
  return prometheus::BuildCounter().Name(name).Help(help).Register(registry).Add(labels);
}

prometheus::Family<prometheus::Gauge>& gauge_family(prometheus::Registry& registry,
                                                    const char* name, const char* help) {
  return prometheus::BuildGauge().Name(name).Help(help).Register(registry);
}

prometheus::Histogram& histogram(prometheus::Registry& registry, const char* name, const char* help,
                                 const prometheus::Labels& labels,
                                 const std::vector<double>& bounds) {
  return prometheus::BuildHistogram().Name(name).Help(help).Register(registry).Add(labels, bounds);
}

}  // namespace

std::vector<double> step_seconds_buckets() {
  return metrics::exponential_buckets(0.005, 2, 16);
}

std::vector<double> allreduce_seconds_buckets() {
  return metrics::exponential_buckets(0.0001, 2, 16);
}

PrometheusTrainTelemetry::PrometheusTrainTelemetry(prometheus::Registry& registry,
                                                   const TelemetryLabels& labels)
    : labels_{{"job_name", labels.job_name}, {"rank", labels.rank}},
      steps_(counter(registry, "ddp3d_train_steps_total",
                     "Training iterations this rank completed (forward, backward and, on update "
                     "iterations, the optimizer step).",
                     labels_)),
      max_steps_(gauge_family(registry, "ddp3d_train_max_steps",
                              "Training iterations this rank process is set to complete: the "
                              "run's total minus those done before a resume, so that it minus "
                              "ddp3d_train_steps_total is the work left; 0 before training "
                              "starts.")
                     .Add(labels_)),
      samples_(counter(registry, "ddp3d_train_samples_total",
                       "Training samples this rank processed (its share of the global batch per "
                       "iteration).",
                       labels_)),
      loss_family_(gauge_family(registry, "ddp3d_train_loss",
                                "This rank's mean total training loss over the last logging "
                                "window (default_hooks.logger.interval iterations); absent until "
                                "the first window ends.")),
      epoch_(gauge_family(registry, "ddp3d_train_epoch",
                          "1-based epoch being trained (as in the training log); 0 before the "
                          "first iteration.")
                 .Add(labels_)),
      lr_(gauge_family(registry, "ddp3d_train_lr",
                       "Learning rate of the last iteration (first param group).")
              .Add(labels_)),
      step_seconds_(histogram(registry, "ddp3d_step_seconds",
                              "Wall time of one training iteration on this rank, data loading, "
                              "forward, backward, all-reduce wait and optimizer step included.",
                              labels_, step_seconds_buckets())),
      allreduce_seconds_(histogram(registry, "ddp3d_allreduce_seconds",
                                   "Time an iteration blocked waiting for DDP's gradient "
                                   "all-reduces after its backward finished (the communication "
                                   "backward did not hide); only synchronising iterations of "
                                   "multi-process runs.",
                                   labels_, allreduce_seconds_buckets())) {}

void PrometheusTrainTelemetry::on_start(std::int64_t planned_iters) {
  max_steps_.Set(static_cast<double>(planned_iters));
}

void PrometheusTrainTelemetry::on_step(const engine::StepRecord& step) {
  steps_.Increment();
  samples_.Increment(static_cast<double>(step.samples));
  epoch_.Set(static_cast<double>(step.epoch));
  lr_.Set(step.lr);
  step_seconds_.Observe(step.step_seconds);
  if (step.allreduce_seconds) allreduce_seconds_.Observe(*step.allreduce_seconds);
}

void PrometheusTrainTelemetry::on_loss(double mean_loss) {
  // Created on the first value: a gauge at 0 would read as a real loss, and NaN as "no value
  // yet" would trip the DDP3DLossNotFinite alert during a long first logging window.
  if (loss_ == nullptr) loss_ = &loss_family_.Add(labels_);
  loss_->Set(mean_loss);
}

}  // namespace ddp3d::telemetry
