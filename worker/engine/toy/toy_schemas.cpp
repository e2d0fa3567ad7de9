#include "worker/engine/toy/toy_schemas.h"

namespace ddp3d::engine {

const config::FieldTable<ToyRegressorOptions>& toy_regressor_fields() {
  using O = ToyRegressorOptions;
  using S = config::Schema;
  static const config::FieldTable<O> table =
      config::FieldTable<O>()
          .key("in_features", S::integer().min(1).required().doc("input width"), &O::in_features)
          .key("hidden",
               S::list(S::integer().min(1))
                   .min_length(1)
                   .def_int_list({32})
                   .doc("hidden layer widths (Linear + ReLU each)"),
               &O::hidden)
          .key("out_features", S::integer().min(1).def(1), &O::out_features)
          .key("unused_branch",
               S::boolean().def(false).doc("add a parameterised branch that takes no part in the "
                                           "loss (exercises ddp.find_unused_parameters)"),
               &O::unused_branch);
  return table;
}

void register_toy_schemas(config::ComponentSchemas& schemas) {
  schemas.add("model", "ToyRegressor", toy_regressor_fields().fields());
}

}  // namespace ddp3d::engine
