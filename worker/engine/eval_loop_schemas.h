// The config keys of the evaluation loops val_cfg and test_cfg can name, registered as
// components of kinds "val_loop" and "test_loop" (no LibTorch: the config tool validates with
// them).
#pragma once

#include "worker/config/component_schemas.h"

namespace ddp3d::engine {

// ValLoop (val_loop), TestLoop (test_loop).
void register_eval_loop_schemas(config::ComponentSchemas& schemas);

}  // namespace ddp3d::engine
