// The config keys of the hooks default_hooks and custom_hooks can name (component kind "hook"),
// torch-free so the config tool validates them; hook_components.h registers their factories.
#pragma once

#include "worker/config/component_schemas.h"

namespace ddp3d::engine {

void register_hook_schemas(config::ComponentSchemas& schemas);

}  // namespace ddp3d::engine
