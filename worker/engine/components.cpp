// The registries and the one place that lists every component library's registration function.
#include <mutex>

#include "worker/detection/detection_components.h"
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
    detection::register_detection_components(model_registry(), dataset_registry(),
                                             evaluator_registry());
  });
}

}  // namespace ddp3d::engine
