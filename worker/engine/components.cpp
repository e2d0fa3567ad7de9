// The registries and the one place that lists every component library's registration function.
#include <mutex>

#include "worker/engine/registry.h"
#include "worker/engine/toy/toy_components.h"

namespace ddp3d::engine {

Registry<Model>& model_registry() {
  static Registry<Model> registry("model");
  return registry;
}

Registry<Dataset>& dataset_registry() {
  static Registry<Dataset> registry("dataset");
  return registry;
}

Registry<Evaluator>& evaluator_registry() {
  static Registry<Evaluator> registry("evaluator");
  return registry;
}

void register_builtin_components() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_toy_components();
    // Component libraries add their line here, e.g. ddp3d::models::register_models();
  });
}

}  // namespace ddp3d::engine
