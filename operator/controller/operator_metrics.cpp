#include "operator/controller/operator_metrics.h"

#include <mutex>

#include "common/metrics/metric.h"

namespace ddp3d::op {

// Gauges whose value is read when Prometheus scrapes, so they can never drift from the cache.
class OperatorMetrics::Sources : public metrics::Collector {
 public:
  std::vector<metrics::FamilySnapshot> collect() const override {
    PhaseCounts phases;
    Depth depth;
    {
      std::lock_guard lock(mu_);
      phases = phases_;
      depth = depth_;
    }
    metrics::FamilySnapshot jobs{"ddp3d_operator_trainingjobs",
                                 "TrainingJobs in the watched namespaces, by status phase "
                                 "(New: not reconciled yet).",
                                 metrics::MetricType::kGauge,
                                 {}};
    std::map<std::string, double> counts;
    for (const char* p : {"New", "Pending", "Starting", "Running", "Restarting", "Succeeded",
                          "Failed", "Suspended"}) {
      counts[p] = 0;
    }
    if (phases) {
      for (const auto& [phase, n] : phases()) counts[phase] += n;
    }
    for (const auto& [phase, n] : counts) jobs.samples.push_back({"", {{"phase", phase}}, n});
    metrics::FamilySnapshot queue{"ddp3d_operator_workqueue_depth",
                                  "Keys waiting in the reconcile work queue.",
                                  metrics::MetricType::kGauge,
                                  {{"", {}, depth ? depth() : 0.0}}};
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

OperatorMetrics::OperatorMetrics(metrics::Registry& registry)
    : reconcile_total(registry.counter("ddp3d_operator_reconcile_total",
                                       "Reconciles of a TrainingJob, by result.", {"result"})),
      reconcile_duration_seconds(
          registry.histogram("ddp3d_operator_reconcile_duration_seconds",
                             "Time to reconcile one TrainingJob, including its API calls.",
                             metrics::exponential_buckets(0.001, 2, 14))),
      actions_total(registry.counter("ddp3d_operator_actions_total",
                                     "Changes applied to the cluster, by action.", {"action"})),
      gang_restarts_total(registry.counter("ddp3d_operator_gang_restarts_total",
                                           "Whole-group restarts of a TrainingJob.",
                                           {"namespace", "job"})),
      jobs_failed_total(registry.counter("ddp3d_operator_jobs_failed_total",
                                         "TrainingJobs that reached phase Failed, by reason.",
                                         {"reason"})),
      status_conflicts_total(
          registry.counter("ddp3d_operator_status_conflicts_total",
                           "Status writes rejected with 409 Conflict (stale resourceVersion).")),
      is_leader(registry.gauge("ddp3d_operator_is_leader",
                               "1 while this replica reconciles (holds the Lease, or runs "
                               "without leader election), else 0.")),
      sources_(std::make_shared<Sources>()) {
  registry.add_collector(sources_);
}

void OperatorMetrics::set_sources(PhaseCounts phases, Depth depth) {
  sources_->set(std::move(phases), std::move(depth));
}

}  // namespace ddp3d::op
