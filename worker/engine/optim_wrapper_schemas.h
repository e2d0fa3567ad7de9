// The config keys of the optimizer wrappers optim_wrapper can name, registered as components of
// kind "optim_wrapper" (no LibTorch: the config tool validates with them). A new wrapper
// registers its own keys after optim_wrapper_fields' common ones.
#pragma once

#include <vector>

#include "worker/config/component_schemas.h"

namespace ddp3d::engine {

// The keys every wrapper has (optimizer, clip_grad, accumulative_counts), then `own`.
std::vector<config::Field> optim_wrapper_fields(std::vector<config::Field> own);

// OptimWrapper, AmpOptimWrapper.
void register_optim_wrapper_schemas(config::ComponentSchemas& schemas);

}  // namespace ddp3d::engine
