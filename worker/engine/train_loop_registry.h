// train_cfg from config (mmengine's LOOPS): `train_cfg: {type: EpochBasedTrainLoop, max_epochs:
// 24, val_interval: 2}`. Built in: EpochBasedTrainLoop and IterBasedTrainLoop
// (train_loop_plans.h). A new loop is a LoopPlan (loop_plan.h), its keys (component kind
// "train_loop", train_loop_schemas.h) and one add() here or from its own library.
#pragma once

#include <cstdint>
#include <string_view>

#include "worker/config/config.h"
#include "worker/config/registry.h"
#include "worker/engine/loop_plan.h"

namespace ddp3d::engine {

config::Registry<LoopPlan>& train_loop_registry();

// The keys every loop has (val_interval, val_begin) from its validated node.
ValidationRule validation_rule(const config::Config& node);

// The progress a run starts from: passes of `iters_per_epoch` iterations (>= 1, else
// std::invalid_argument) and the limits `plan` sets.
LoopProgress planned_progress(const LoopPlan& plan, std::int64_t iters_per_epoch);

// A train_cfg mapping from YAML ("{max_epochs: 2}"), validated, with the schema's defaults:
// options built in code use it where a config's node goes. Needs the schemas registered
// (components::register_builtin_schemas()).
config::Config train_loop_config(std::string_view yaml);

}  // namespace ddp3d::engine
