// The operator's Prometheus metrics (documented in docs/metrics.md, "Operator metrics"; the
// chart's dashboards and alert rules use these names).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "common/metrics/registry.h"

namespace ddp3d::op {

class OperatorMetrics {
 public:
  // Scrape-time sources: TrainingJobs per phase (from the informer cache) and queue depth.
  using PhaseCounts = std::function<std::map<std::string, double>()>;
  using Depth = std::function<double()>;

  explicit OperatorMetrics(metrics::Registry& registry);

  void set_sources(PhaseCounts phases, Depth depth);

  metrics::CounterFamily& reconcile_total;  // {result="success"|"error"}
  metrics::HistogramFamily& reconcile_duration_seconds;
  metrics::CounterFamily& actions_total;        // {action="CreatePod"|...}
  metrics::CounterFamily& gang_restarts_total;  // {namespace, job}
  metrics::CounterFamily& jobs_failed_total;    // {reason}
  metrics::CounterFamily& status_conflicts_total;
  metrics::GaugeFamily& is_leader;

 private:
  class Sources;
  std::shared_ptr<Sources> sources_;
};

}  // namespace ddp3d::op
