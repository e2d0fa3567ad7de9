// Fills PointPillarsOptions from a loaded config's `model` node (type: PointPillars). The keys
// are mmdet3d's; the schema (worker/config/ddp3d_schema.cpp) has already checked types and
// filled defaults, so this is a direct mapping plus validate().
#pragma once

#include "worker/config/config.h"
#include "worker/models/pointpillars_options.h"

namespace ddp3d::models {

// `model` is the config view at "model". Throws config::ConfigError for a missing key and
// std::invalid_argument (from validate) for inconsistent values, both naming the key.
PointPillarsOptions pointpillars_options_from_config(const config::Config& model);

}  // namespace ddp3d::models
