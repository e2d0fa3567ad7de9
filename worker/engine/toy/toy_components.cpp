#include "worker/engine/toy/toy_components.h"

#include <cstdint>
#include <vector>

#include "worker/engine/registry.h"
#include "worker/engine/toy/regression_metric.h"
#include "worker/engine/toy/synthetic_regression.h"
#include "worker/engine/toy/toy_regressor.h"
#include "worker/engine/toy/toy_schemas.h"

namespace ddp3d::engine {

void register_toy_components() {
  model_registry().add("ToyRegressor", [](const config::Config& cfg) {
    ToyRegressorOptions o;
    toy_regressor_fields().read(cfg, o);
    return std::make_shared<ToyRegressor>(o.in_features, o.hidden, o.out_features, o.unused_branch);
  });
  dataset_registry().add("SyntheticRegression", [](const config::Config& cfg) {
    SyntheticRegressionOptions o;
    o.num_samples = cfg.get<std::int64_t>("num_samples");
    // 8 inputs -> 1 output (SyntheticRegressionOptions), the toy configs' ToyRegressor.
    o.noise = cfg.get<double>("noise");
    o.seed = static_cast<std::uint64_t>(cfg.get<std::int64_t>("seed"));
    return std::make_shared<SyntheticRegression>(o);
  });
  evaluator_registry().add("RegressionMetric", [](const config::Config&) {
    return std::make_shared<RegressionMetric>();
  });
}

}  // namespace ddp3d::engine
