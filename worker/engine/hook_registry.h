// Hooks built from config (mmengine's custom_hooks: [{type: EMAHook, priority: NORMAL, ...}]).
// A hook type registers its factory here and its keys under the component kind "hook"
// (config::component_schemas()), so a new hook is its own file and one registration.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "worker/config/config.h"
#include "worker/engine/hook.h"

namespace ddp3d::engine {

class TrainLog;

// What a hook may need besides its config; all of it outlives the hooks.
struct HookBuildContext {
  TrainLog& log;
  const RunContext& run;
  Model& model;
  std::filesystem::path work_dir;
};

struct BuiltHook {
  std::shared_ptr<Hook> hook;
  HookPriority priority = HookPriority::kNormal;
};

class HookRegistry {
 public:
  using Factory =
      std::function<std::shared_ptr<Hook>(const config::Config&, const HookBuildContext&)>;

  // Throws std::logic_error when `type` is already registered.
  void add(const std::string& type, Factory factory, HookPriority default_priority);
  bool contains(const std::string& type) const { return entries_.contains(type); }
  std::vector<std::string> types() const;
  // The hook named by cfg's `type`, at cfg's `priority` (a name such as VERY_HIGH or a number
  // 0-100) or the type's default. An unknown type is a ConfigError naming the key.
  BuiltHook build(const config::Config& cfg, const HookBuildContext& ctx) const;

 private:
  struct Entry {
    Factory factory;
    HookPriority priority;
  };
  std::map<std::string, Entry> entries_;
};

HookRegistry& hook_registry();

// mmengine's priority names (HIGHEST, VERY_HIGH, HIGH, ABOVE_NORMAL, NORMAL, BELOW_NORMAL, LOW,
// VERY_LOW, LOWEST) and their values.
const std::vector<std::pair<std::string, HookPriority>>& hook_priority_names();

}  // namespace ddp3d::engine
