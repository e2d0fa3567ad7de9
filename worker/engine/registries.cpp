// The engine's registries, empty until the binary or a test registers components.
#include "worker/engine/registry.h"

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

}  // namespace ddp3d::engine
