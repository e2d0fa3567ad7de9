// mmengine's merge rule for config trees: mappings merge key by key (recursively), everything
// else - lists included - is replaced wholesale; a child mapping carrying `_delete_: true`
// replaces the base mapping instead of merging into it.
#pragma once

#include "worker/config/value.h"

namespace ddp3d::config {

// Merges `child` on top of `base`. `_delete_` keys are consumed: none survives in `base`.
// A `_delete_` that is not a boolean is a ConfigError naming its file and key.
void merge_into(Value& base, Value child, const std::string& key = "");

// Removes every `_delete_` key below `v` (checking that each is a boolean).
void strip_delete(Value& v, const std::string& key = "");

}  // namespace ddp3d::config
