// The config keys of the parameter schedulers `param_scheduler: [{type: ...}]` can name,
// registered as components of kind "param_scheduler" (no LibTorch: the config tool validates
// with them). A new scheduler registers its own keys after param_scheduler_fields' common ones.
#pragma once

#include <vector>

#include "worker/config/component_schemas.h"

namespace ddp3d::engine {

// The keys every scheduler has (by_epoch, begin, end, convert_to_iter_based), then `own`.
std::vector<config::Field> param_scheduler_fields(std::vector<config::Field> own);

// StepLR, MultiStepLR, LinearLR, ConstantLR, CosineAnnealingLR and their *Momentum twins.
void register_param_scheduler_schemas(config::ComponentSchemas& schemas);

}  // namespace ddp3d::engine
