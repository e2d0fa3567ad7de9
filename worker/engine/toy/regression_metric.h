// RegressionMetric: mean squared and mean absolute error of "pred" against the batch's
// "targets", over the whole dataset (every rank's samples).
#pragma once

#include "worker/engine/evaluator.h"

namespace ddp3d::engine {

class RegressionMetric : public Evaluator {
 public:
  void process(const Batch& batch, const std::vector<Sample>& predictions) override;
  // {"mse": ..., "mae": ..., "count": n}; throws std::invalid_argument on no results.
  MetricMap compute_metrics(const std::vector<Sample>& results) override;
  // mse, lower is better.
  std::optional<KeyMetric> key_metric(const MetricMap& metrics) const override;
};

}  // namespace ddp3d::engine
