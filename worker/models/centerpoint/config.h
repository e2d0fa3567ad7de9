// A CenterHead's options from a loaded config's `model` node: the head's keys, the model's
// train_cfg and test_cfg, and the coder's geometry, which defaults to the voxel layer's.
#pragma once

#include "worker/config/config.h"
#include "worker/models/centerpoint/options.h"

namespace ddp3d::models {

struct CenterHeadConfig {
  CenterHeadOptions head;
  CenterPointTrainCfg train_cfg;
  CenterPointTestCfg test_cfg;
};

// `model` is the config view at "model" (a validated model CenterPoint). Throws
// config::ConfigError naming the key when a value cannot be used.
CenterHeadConfig center_head_config(const config::Config& model);

}  // namespace ddp3d::models
