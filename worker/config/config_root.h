// Internal to ddp3d_config: what every view of one loaded config shares.
#pragma once

#include <filesystem>

#include "worker/config/config.h"
#include "worker/config/value.h"

namespace ddp3d::config {

struct Config::Root {
  Value tree;
  std::filesystem::path file;
};

}  // namespace ddp3d::config
