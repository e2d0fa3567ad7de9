#include "operator/runtime/operator_metrics.h"

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include <mutex>
#include <vector>

namespace ddp3d::op {
namespace {

prometheus::Family<prometheus::Counter>& counters(metrics::Collection& m, const char* name,
                                                  const char* help) {
  return prometheus::BuildCounter().Name(name).Help(help).Register(m.registry());
}

prometheus::ClientMetric gauge_sample(double value, const std::string& label = {},
                                      const std::string& label_value = {}) {
  prometheus::ClientMetric sample;
  if (!label.empty()) sample.label.push_back({label, label_value});
  sample.gauge.value = value;
  return sample;
}

}  // namespace

// Gauges whose value is read when Prometheus scrapes, so they can never drift from the cache.
class OperatorMetrics::Sources : public prometheus::Collectable {
 public:
  std::vector<prometheus::MetricFamily> Collect() const override {
    PhaseCounts phases;
    Depth depth;
    {
      std::lock_guard lock(mu_);
      phases = phases_;
      depth = depth_;
    }
    prometheus::MetricFamily jobs{"ddp3d_operator_trainingjobs",
                                  "TrainingJobs in the watched namespaces, by status phase "
                                  "(New: not reconciled yet).",
                                  prometheus::MetricType::Gauge,
                                  {}};
    std::map<std::string, double> counts;
    for (const char* p : {"New", "Pending", "Starting", "Running", "Restarting", "Succeeded",
                          "Failed", "Suspended"}) {
      counts[p] = 0;
    }
    if (phases) {
      for (const auto& [phase, n] : phases()) counts[phase] += n;
    }
    for (const auto& [phase, n] : counts) jobs.metric.push_back(gauge_sample(n, "phase", phase));
    prometheus::MetricFamily queue{"ddp3d_operator_workqueue_depth",
                                   "Keys waiting in the reconcile work queue.",
                                   prometheus::MetricType::Gauge,
                                   {gauge_sample(depth ? depth() : 0.0)}};
    return {jobs, queue};
  }

  void set(PhaseCounts phases, Depth depth) {
    std::lock_guard lock(mu_);
    phases_ = std::move(phases);
    depth_ = std::move(depth);
  }

 private:
  mutable std::mutex mu_;
  PhaseCounts phases_;
  Depth depth_;
};

OperatorMetrics::OperatorMetrics(metrics::Collection& m)
    : reconcile_total(
          counters(m, "ddp3d_operator_reconcile_total", "Reconciles of a TrainingJob, by result.")),
      reconcile_duration_seconds(
          prometheus::BuildHistogram()
              .Name("ddp3d_operator_reconcile_duration_seconds")
              .Help("Time to reconcile one TrainingJob, including its API calls.")
              .Register(m.registry())
              .Add({}, metrics::exponential_buckets(0.001, 2, 14))),
      actions_total(counters(m, "ddp3d_operator_actions_total",
                             "Changes applied to the cluster, by action.")),
      gang_restarts_total(counters(m, "ddp3d_operator_gang_restarts_total",
                                   "Whole-group restarts of a TrainingJob.")),
      jobs_failed_total(counters(m, "ddp3d_operator_jobs_failed_total",
                                 "TrainingJobs that reached phase Failed, by reason.")),
      status_conflicts_total(
          counters(m, "ddp3d_operator_status_conflicts_total",
                   "Status writes rejected with 409 Conflict (stale resourceVersion).")
              .Add({})),
      is_leader(prometheus::BuildGauge()
                    .Name("ddp3d_operator_is_leader")
                    .Help("1 while this replica reconciles (holds the Lease, or runs without "
                          "leader election), else 0.")
                    .Register(m.registry())
                    .Add({})),
      sources_(std::make_shared<Sources>()) {
  m.add(sources_);
}

prometheus::Counter& OperatorMetrics::reconcile(std::string_view result) {
  return reconcile_total.Add({{"result", std::string(result)}});
}

prometheus::Counter& OperatorMetrics::action(std::string_view kind) {
  return actions_total.Add({{"action", std::string(kind)}});
}

prometheus::Counter& OperatorMetrics::gang_restarts(std::string_view trainingjob_namespace,
                                                    std::string_view trainingjob) {
  return gang_restarts_total.Add({{"trainingjob_namespace", std::string(trainingjob_namespace)},
                                  {"trainingjob", std::string(trainingjob)}});
}

prometheus::Counter& OperatorMetrics::job_failed(std::string_view reason) {
  return jobs_failed_total.Add({{"reason", std::string(reason)}});
}

void OperatorMetrics::set_sources(PhaseCounts phases, Depth depth) {
  sources_->set(std::move(phases), std::move(depth));
}

}  // namespace ddp3d::op
