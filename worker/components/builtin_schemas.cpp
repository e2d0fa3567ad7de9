#include <mutex>

#include "worker/components/builtin_components.h"
#include "worker/config/component_schemas.h"
#include "worker/engine/eval_loop_schemas.h"
#include "worker/engine/hooks/hook_schemas.h"
#include "worker/engine/optim_wrapper_schemas.h"
#include "worker/engine/optimizer_schemas.h"
#include "worker/engine/param_scheduler_schemas.h"
#include "worker/engine/toy/toy_schemas.h"
#include "worker/engine/train_loop_schemas.h"
#include "worker/models/centerpoint/fields.h"
#include "worker/models/pointpillars/fields.h"

namespace ddp3d::components {

void register_builtin_schemas() {
  static std::once_flag once;
  std::call_once(once, [] {
    config::ComponentSchemas& schemas = config::component_schemas();
    models::register_pointpillars_schemas(schemas);
    models::register_centerpoint_schemas(schemas);
    engine::register_toy_schemas(schemas);
    engine::register_hook_schemas(schemas);
    engine::register_optim_wrapper_schemas(schemas);
    engine::register_optimizer_schemas(schemas);
    engine::register_param_scheduler_schemas(schemas);
    engine::register_train_loop_schemas(schemas);
    engine::register_eval_loop_schemas(schemas);
  });
}

}  // namespace ddp3d::components
