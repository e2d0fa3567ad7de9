// A point-in-time copy of metric values: what collectors produce and the exposition writer
// consumes. Plain data, no locks, so the writer is pure and testable with literal inputs.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace ddp3d::metrics {

enum class MetricType { kCounter, kGauge, kHistogram };

// The exposition format's word for a type ("counter", "gauge", "histogram").
constexpr const char* metric_type_name(MetricType type) {
  switch (type) {
    case MetricType::kCounter:
      return "counter";
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kHistogram:
      return "histogram";
  }
  return "untyped";
}

// Ordered (name, value) pairs; the order is the family's label-name order.
using LabelPairs = std::vector<std::pair<std::string, std::string>>;

// One exposition line: <family name><suffix>{labels} value. suffix is "" for counters and
// gauges and "_bucket" / "_sum" / "_count" for histograms.
struct Sample {
  std::string suffix;
  LabelPairs labels;
  double value = 0;
};

struct FamilySnapshot {
  std::string name;
  std::string help;
  MetricType type = MetricType::kGauge;
  std::vector<Sample> samples;
};

}  // namespace ddp3d::metrics
