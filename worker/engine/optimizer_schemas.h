// The config keys of the optimizers optim_wrapper.optimizer can name, registered as components
// of kind "optimizer" (no LibTorch: the config tool validates with them). A new optimizer
// registers its own keys after optimizer_fields' common ones.
#pragma once

#include <vector>

#include "worker/config/component_schemas.h"

namespace ddp3d::engine {

// The keys every optimizer has (lr, weight_decay), then `own`.
std::vector<config::Field> optimizer_fields(std::vector<config::Field> own);

// AdamW, Adam, SGD.
void register_optimizer_schemas(config::ComponentSchemas& schemas);

}  // namespace ddp3d::engine
