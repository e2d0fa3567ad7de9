// The config keys of the training loops train_cfg can name, registered as components of kind
// "train_loop" (no LibTorch: the config tool validates with them). A new loop registers its own
// keys after train_loop_fields' common ones.
#pragma once

#include <vector>

#include "worker/config/component_schemas.h"

namespace ddp3d::engine {

// The keys every loop has (by_epoch, val_interval, val_begin), then `own`.
std::vector<config::Field> train_loop_fields(std::vector<config::Field> own);

// EpochBasedTrainLoop, IterBasedTrainLoop.
void register_train_loop_schemas(config::ComponentSchemas& schemas);

}  // namespace ddp3d::engine
