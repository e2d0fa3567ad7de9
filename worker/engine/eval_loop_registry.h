// val_cfg and test_cfg from config (mmengine's LOOPS): `val_cfg: {type: ValLoop}`,
// `test_cfg: {type: TestLoop}`. A new loop is an EvalLoop (eval_loop.h), its keys (component
// kind "val_loop" or "test_loop", eval_loop_schemas.h) and one add() here or from its own
// library.
#pragma once

#include <string_view>

#include "worker/config/config.h"
#include "worker/config/registry.h"
#include "worker/engine/eval_loop.h"

namespace ddp3d::engine {

config::Registry<EvalLoop>& eval_loop_registry();

// A val_cfg mapping from YAML ("{}"), validated, with the schema's defaults: options built in
// code use it where a config's node goes. Needs the schemas registered
// (components::register_builtin_schemas()).
config::Config val_loop_config(std::string_view yaml);

}  // namespace ddp3d::engine
