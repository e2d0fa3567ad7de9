// The evaluator interface, in mmengine's BaseMetric shape: `process` turns each batch's
// predictions into per-sample records kept on this rank; after the loop the runner gathers every
// rank's records on rank 0 (restoring dataset order and dropping the sampler's padding) and calls
// `compute_metrics` there once. Records are Samples so they serialise generically.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "worker/engine/sample.h"

namespace ddp3d::engine {

using MetricMap = std::map<std::string, double>;

class Evaluator {
 public:
  virtual ~Evaluator() = default;
  // Called once per batch with the model's predictions (one per sample, batch order). Append
  // the records compute_metrics needs with add_result.
  virtual void process(const Batch& batch, const std::vector<Sample>& predictions) = 0;
  // Metrics over all records of the dataset (every rank's), e.g. {"mAP_3d_moderate": 71.3}.
  virtual MetricMap compute_metrics(const std::vector<Sample>& results) = 0;

  void add_result(Sample record) { results_.push_back(std::move(record)); }
  const std::vector<Sample>& results() const { return results_; }
  void reset() { results_.clear(); }

 private:
  std::vector<Sample> results_;
};

}  // namespace ddp3d::engine
