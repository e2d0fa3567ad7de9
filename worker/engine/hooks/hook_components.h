// Registers the factories of the hooks default_hooks and custom_hooks can name (hook_registry()).
#pragma once

namespace ddp3d::engine {

void register_hook_components();

}  // namespace ddp3d::engine
