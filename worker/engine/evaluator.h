// The evaluator interface, in mmengine's BaseMetric shape: `process` turns each batch's
// predictions into per-sample records kept on this rank; after the loop the runner gathers every
// rank's records on rank 0 (restoring dataset order and dropping the sampler's padding) and calls
// `compute_metrics` there once. Records are Samples so they serialise generically.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "worker/engine/metric_map.h"
#include "worker/engine/sample.h"

namespace ddp3d::engine {

// Pictures of predictions (`ddp3d test --show-dir DIR`), as mmdet3d's test.py --show-dir.
struct DrawOptions {
  std::filesystem::path dir;
  std::int64_t count = -1;       // samples with a dataset index below it; -1: every sample
  double score_threshold = 0.1;  // predictions below it are not drawn
};

class Evaluator {
 public:
  virtual ~Evaluator() = default;
  // Called once per batch with the model's predictions (one per sample, batch order). Append
  // the records compute_metrics needs with add_result.
  virtual void process(const Batch& batch, const std::vector<Sample>& predictions) = 0;
  // Metrics over all records of the dataset (every rank's), e.g. {"mAP_3d_moderate": 71.3}.
  virtual MetricMap compute_metrics(const std::vector<Sample>& results) = 0;

  // Which of `metrics` (a compute_metrics result) ranks evaluations against each other; none
  // by default.
  virtual std::optional<KeyMetric> key_metric(const MetricMap& /*metrics*/) const {
    return std::nullopt;
  }

  // Whether draw() makes pictures of this evaluator's task; false by default.
  virtual bool can_draw() const { return false; }
  // Called once per batch, before process(), when pictures were asked for: one file per sample
  // (of those `options.count` admits) in `options.dir`. Each rank draws its own samples.
  virtual void draw(const Batch& /*batch*/, const std::vector<Sample>& /*predictions*/,
                    const DrawOptions& /*options*/) {}

  void add_result(Sample record) { results_.push_back(std::move(record)); }
  const std::vector<Sample>& results() const { return results_; }
  void reset() { results_.clear(); }

 private:
  std::vector<Sample> results_;
};

}  // namespace ddp3d::engine
