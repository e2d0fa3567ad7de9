// `--cfg-options a.b.c=value`: one override of the merged config, as mmengine's
// `Config.merge_from_dict` does it. The value is YAML (`0.001`, `true`, `[1, 2]`, `foo`,
// `{max_norm: 10}`); a numeric key component indexes an existing list (`param_scheduler.0.end=8`).
#pragma once

#include <string>
#include <vector>

#include "worker/config/value.h"

namespace ddp3d::config {

struct CfgOption {
  std::vector<std::string> key;  // components of the dotted key
  Value value;                   // origin: "--cfg-options <text>"
  std::string text;              // as the user wrote it
};

// Parses "a.b.c=value". A missing '=' or an empty key component is a ConfigError.
CfgOption parse_cfg_option(const std::string& text);

// Sets the option's value in `root`, merging mappings as a `_base_` child would and creating
// intermediate mappings that are missing. Whether a key may exist is the schema's call (an
// option naming an unknown key then fails validation with the option as its origin). Indexing
// past the end of a list or into a scalar is a ConfigError.
void apply_cfg_option(Value& root, const CfgOption& option);

}  // namespace ddp3d::config
