#include "worker/engine/eval_loop_schemas.h"

namespace ddp3d::engine {

void register_eval_loop_schemas(config::ComponentSchemas& schemas) {
  // One pass each, with no keys of their own: evaluation runs in float32, so mmengine's fp16
  // flag would have nothing to switch.
  schemas.add("val_loop", "ValLoop", {});
  schemas.add("test_loop", "TestLoop", {});
}

}  // namespace ddp3d::engine
