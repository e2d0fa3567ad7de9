#include "worker/engine/hooks/hook_components.h"

#include <memory>

#include "worker/engine/hook_registry.h"
#include "worker/engine/hooks/ema_hook.h"

namespace ddp3d::engine {

void register_hook_components() {
  hook_registry().add(
      "EMAHook",
      [](const config::Config& cfg, const HookBuildContext& ctx) {
        EmaHookOptions o;
        o.momentum = cfg.get<double>("momentum");
        o.interval = cfg.get<std::int64_t>("interval");
        o.begin_iter = cfg.get<std::int64_t>("begin_iter");
        return std::make_shared<EmaHook>(ctx.model, o);
      },
      HookPriority::kNormal);
}

}  // namespace ddp3d::engine
