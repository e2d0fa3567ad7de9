// The toy's config keys (no LibTorch here: the config tool and the config tests validate toy
// configs without building them).
#pragma once

#include <cstdint>
#include <vector>

#include "worker/config/component_schemas.h"
#include "worker/config/field_table.h"

namespace ddp3d::engine {

// model (type: ToyRegressor)
struct ToyRegressorOptions {
  std::int64_t in_features = 8;
  std::vector<std::int64_t> hidden{32};
  std::int64_t out_features = 1;
  bool unused_branch = false;
};

const config::FieldTable<ToyRegressorOptions>& toy_regressor_fields();

// Registers model ToyRegressor's schema.
void register_toy_schemas(config::ComponentSchemas& schemas);

}  // namespace ddp3d::engine
