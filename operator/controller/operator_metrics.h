// The operator's Prometheus metrics (documented in docs/metrics.md, "Operator metrics"; the
// chart's dashboards and alert rules use these names), as prometheus-cpp families.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "common/metrics/collection.h"

namespace ddp3d::op {

class OperatorMetrics {
 public:
  // Scrape-time sources: TrainingJobs per phase (from the informer cache) and queue depth.
  using PhaseCounts = std::function<std::map<std::string, double>()>;
  using Depth = std::function<double()>;

  // Registers the families in `metrics` (which must outlive this).
  explicit OperatorMetrics(metrics::Collection& metrics);

  void set_sources(PhaseCounts phases, Depth depth);

  prometheus::Family<prometheus::Counter>& reconcile_total;  // {result="success"|"error"}
  prometheus::Histogram& reconcile_duration_seconds;
  prometheus::Family<prometheus::Counter>& actions_total;        // {action="CreatePod"|...}
  prometheus::Family<prometheus::Counter>& gang_restarts_total;  // {trainingjob_namespace, trainingjob}
  prometheus::Family<prometheus::Counter>& jobs_failed_total;    // {reason}
  prometheus::Counter& status_conflicts_total;
  prometheus::Gauge& is_leader;

 private:
  class Sources;
  std::shared_ptr<Sources> sources_;
};

}  // namespace ddp3d::op
