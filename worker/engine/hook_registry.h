// Hooks built from config: mmengine's default_hooks ({logger: {type: LoggerHook, interval: 50},
// ...}) and custom_hooks ([{type: EMAHook, priority: NORMAL, ...}]). A hook type registers its
// factory here and its keys under the component kind "hook" (config::component_schemas()), so a
// new hook is its own file and one registration.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "worker/config/config.h"
#include "worker/engine/hook.h"

namespace ddp3d::engine {

class TrainLog;

class Evaluator;
class OptimWrapper;
class ParamSchedule;

// What a hook may need besides its config; all of it outlives the hooks. The runner's parts
// are null where a caller has none (a test building one hook).
struct HookBuildContext {
  TrainLog& log;
  const RunContext& run;
  Model& model;
  std::filesystem::path work_dir;
  OptimWrapper* optim = nullptr;
  const ParamSchedule* schedule = nullptr;
  std::shared_ptr<Evaluator> val_evaluator = nullptr;  // null: no validation
  bool resumed = false;                                // training continues from a checkpoint
};

// A null hook: the config asks for nothing to run (e.g. Det3DVisualizationHook with draw off).
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

// default_hooks' keys in the order the runner adds them (equal priorities run in that order).
const std::vector<std::string>& default_hook_keys();

// A default_hooks mapping from YAML ("{logger: {interval: 10}}"), validated, with the schema's
// defaults for everything it leaves out: options built in code use it where a config's node goes.
// Needs the hook schemas registered (components::register_builtin_schemas()).
config::Config default_hooks_config(std::string_view yaml = "{}");

// mmengine's priority names (HIGHEST, VERY_HIGH, HIGH, ABOVE_NORMAL, NORMAL, BELOW_NORMAL, LOW,
// VERY_LOW, LOWEST) and their values.
const std::vector<std::pair<std::string, HookPriority>>& hook_priority_names();

}  // namespace ddp3d::engine
