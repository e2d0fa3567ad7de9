// Evaluation results as the engine passes them around: metric name → value, and the metric
// that ranks one evaluation against another.
#pragma once

#include <map>
#include <string>

namespace ddp3d::engine {

using MetricMap = std::map<std::string, double>;

// The metric that says which of several evaluations is best (the summary's best epoch).
struct KeyMetric {
  std::string name;
  bool greater_is_better = true;
};

}  // namespace ddp3d::engine
