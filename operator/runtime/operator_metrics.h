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
#include <string_view>

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

  // The labelled counters' series by their label values, so that the label names live here
  // only. None may be a label a scrape attaches to every target (job, namespace, pod, ...):
  // Prometheus would store it as exported_<name> (docs/metrics.md, "Operator metrics").
  prometheus::Counter& reconcile(std::string_view result);  // "success" | "error"
  prometheus::Counter& action(std::string_view kind);       // "CreatePod" | ...
  prometheus::Counter& gang_restarts(std::string_view trainingjob_namespace,
                                     std::string_view trainingjob);
  prometheus::Counter& job_failed(std::string_view reason);

  // The families (label names as in the accessors above).
  prometheus::Family<prometheus::Counter>& reconcile_total;
  prometheus::Histogram& reconcile_duration_seconds;
  prometheus::Family<prometheus::Counter>& actions_total;
  prometheus::Family<prometheus::Counter>& gang_restarts_total;
  prometheus::Family<prometheus::Counter>& jobs_failed_total;
  prometheus::Counter& status_conflicts_total;
  prometheus::Gauge& is_leader;

 private:
  class Sources;
  std::shared_ptr<Sources> sources_;
};

}  // namespace ddp3d::op
