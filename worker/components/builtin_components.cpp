#include "worker/components/builtin_components.h"

#include <mutex>

#include "worker/detection/detection_components.h"
#include "worker/engine/hooks/hook_components.h"
#include "worker/engine/registry.h"
#include "worker/engine/toy/toy_components.h"

namespace ddp3d::components {

void register_builtin_components() {
  register_builtin_schemas();
  static std::once_flag once;
  std::call_once(once, [] {
    detection::register_detection_components(engine::model_registry(), engine::dataset_registry(),
                                             engine::evaluator_registry());
    engine::register_toy_components();
    engine::register_hook_components();
  });
}

}  // namespace ddp3d::components
