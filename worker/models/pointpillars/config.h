// PointPillarsOptions from a loaded config's `model` node (type: PointPillars), through the
// tables of pointpillars/fields.h, and the cross-key checks the config system runs on such a
// node at load time (so a bad config fails naming file:line: key before any rank starts).
#pragma once

#include <string>

#include "worker/config/config.h"
#include "worker/config/cross_check.h"
#include "worker/models/pointpillars/options.h"

namespace ddp3d::models {

// `model` is the config view at "model". Throws config::ConfigError for a missing key and
// std::invalid_argument (from validate) for inconsistent values, both naming the key.
PointPillarsOptions pointpillars_options_from_config(const config::Config& model);

// The registered checks of model PointPillars (check_connections, the grid against the voxel
// layer, the class names against the datasets) and of backbone SECOND (check_second_stages).
void check_pointpillars_config(config::CrossCheck& check, const std::string& key);
void check_second_config(config::CrossCheck& check, const std::string& key);

}  // namespace ddp3d::models
