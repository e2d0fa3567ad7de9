#include "worker/engine/prometheus_telemetry.h"

#include "common/metrics/metric.h"

namespace ddp3d::engine {
namespace {

const std::vector<std::string> kLabelNames = {"job_name", "rank"};

}  // namespace

std::vector<double> step_seconds_buckets() {
  return metrics::exponential_buckets(0.005, 2, 16);
}

std::vector<double> allreduce_seconds_buckets() {
  return metrics::exponential_buckets(0.0001, 2, 16);
}

PrometheusTrainTelemetry::PrometheusTrainTelemetry(metrics::Registry& registry,
                                                   const TelemetryLabels& labels)
    : steps_(registry
                 .counter("ddp3d_train_steps_total",
                          "Training iterations this rank completed (forward, backward and, on "
                          "update iterations, the optimizer step).",
                          kLabelNames)
                 .labels({labels.job_name, labels.rank})),
      samples_(registry
                   .counter("ddp3d_train_samples_total",
                            "Training samples this rank processed (its share of the global "
                            "batch per iteration).",
                            kLabelNames)
                   .labels({labels.job_name, labels.rank})),
      loss_family_(
          registry.gauge("ddp3d_train_loss",
                         "This rank's mean total training loss over the last logging window "
                         "(default_hooks.logger.interval iterations); absent until the first "
                         "window ends.",
                         kLabelNames)),
      label_values_({labels.job_name, labels.rank}),
      epoch_(registry
                 .gauge("ddp3d_train_epoch",
                        "1-based epoch being trained (as in the training log); 0 before the "
                        "first iteration.",
                        kLabelNames)
                 .labels({labels.job_name, labels.rank})),
      lr_(registry
              .gauge("ddp3d_train_lr", "Learning rate of the last iteration (first param group).",
                     kLabelNames)
              .labels({labels.job_name, labels.rank})),
      step_seconds_(registry
                        .histogram("ddp3d_step_seconds",
                                   "Wall time of one training iteration on this rank, data "
                                   "loading, forward, backward, all-reduce wait and optimizer "
                                   "step included.",
                                   step_seconds_buckets(), kLabelNames)
                        .labels({labels.job_name, labels.rank})),
      allreduce_seconds_(
          registry
              .histogram("ddp3d_allreduce_seconds",
                         "Time an iteration blocked waiting for DDP's gradient all-reduces after "
                         "its backward finished (the communication backward did not hide); only "
                         "synchronising iterations of multi-process runs.",
                         allreduce_seconds_buckets(), kLabelNames)
              .labels({labels.job_name, labels.rank})) {}

void PrometheusTrainTelemetry::on_step(const StepRecord& step) {
  steps_.inc();
  samples_.inc(static_cast<double>(step.samples));
  epoch_.set(static_cast<double>(step.epoch));
  lr_.set(step.lr);
  step_seconds_.observe(step.step_seconds);
  if (step.allreduce_seconds) allreduce_seconds_.observe(*step.allreduce_seconds);
}

void PrometheusTrainTelemetry::on_loss(double mean_loss) {
  // Created on the first value: a gauge at 0 would read as a real loss, and NaN as "no value
  // yet" would trip the DDP3DLossNotFinite alert during a long first logging window.
  if (loss_ == nullptr) loss_ = &loss_family_.labels(label_values_);
  loss_->set(mean_loss);
}

}  // namespace ddp3d::engine
