#include "worker/engine/toy/regression_metric.h"

#include <ATen/ATen.h>

#include <stdexcept>

namespace ddp3d::engine {

void RegressionMetric::process(const Batch& batch, const std::vector<Sample>& predictions) {
  const at::Tensor targets = batch.get("targets").to(at::kCPU);
  if (static_cast<std::int64_t>(predictions.size()) != batch.size) {
    throw std::invalid_argument("RegressionMetric: " + std::to_string(predictions.size()) +
                                " predictions for a batch of " + std::to_string(batch.size));
  }
  for (std::int64_t i = 0; i < batch.size; ++i) {
    Sample record;
    record.tensors["pred"] = predictions[i].tensor("pred").detach().to(at::kCPU);
    record.tensors["target"] = targets[i];
    if (i < static_cast<std::int64_t>(batch.meta.size())) record.meta = batch.meta[i];
    add_result(std::move(record));
  }
}

MetricMap RegressionMetric::compute_metrics(const std::vector<Sample>& results) {
  if (results.empty()) throw std::invalid_argument("RegressionMetric: no results to score");
  std::vector<at::Tensor> preds;
  std::vector<at::Tensor> targets;
  for (const Sample& r : results) {
    preds.push_back(r.tensor("pred"));
    targets.push_back(r.tensor("target"));
  }
  const at::Tensor diff = at::stack(preds).to(at::kDouble) - at::stack(targets).to(at::kDouble);
  return {{"mse", diff.pow(2).mean().item<double>()},
          {"mae", diff.abs().mean().item<double>()},
          {"count", static_cast<double>(results.size())}};
}

std::optional<KeyMetric> RegressionMetric::key_metric(const MetricMap& metrics) const {
  if (!metrics.contains("mse")) return std::nullopt;
  return KeyMetric{"mse", false};
}

}  // namespace ddp3d::engine
