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
    // Input/output widths default to ToyRegressor's (8 -> 1) when the config leaves them out.
    o.in_dim = cfg.get_or<std::int64_t>("in_features", 8);
    o.out_dim = cfg.get_or<std::int64_t>("out_features", 1);
    o.noise = cfg.get_or<double>("noise", 0.0);
    o.seed = static_cast<std::uint64_t>(cfg.get_or<std::int64_t>("seed", 0));
    return std::make_shared<SyntheticRegression>(o);
  });
  evaluator_registry().add("RegressionMetric", [](const config::Config&) {
    return std::make_shared<RegressionMetric>();
  });
}

}  // namespace ddp3d::engine
