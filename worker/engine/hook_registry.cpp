#include "worker/engine/hook_registry.h"

#include <stdexcept>
#include <utility>

namespace ddp3d::engine {

const std::vector<std::pair<std::string, HookPriority>>& hook_priority_names() {
  static const std::vector<std::pair<std::string, HookPriority>> names = {
      {"HIGHEST", HookPriority::kHighest}, {"VERY_HIGH", HookPriority::kVeryHigh},
      {"HIGH", HookPriority::kHigh},       {"ABOVE_NORMAL", HookPriority::kAboveNormal},
      {"NORMAL", HookPriority::kNormal},   {"BELOW_NORMAL", HookPriority::kBelowNormal},
      {"LOW", HookPriority::kLow},         {"VERY_LOW", HookPriority::kVeryLow},
      {"LOWEST", HookPriority::kLowest},
  };
  return names;
}

void HookRegistry::add(const std::string& type, Factory factory, HookPriority default_priority) {
  if (!entries_.emplace(type, Entry{std::move(factory), default_priority}).second)
    throw std::logic_error("hook type '" + type + "' is registered twice");
}

std::vector<std::string> HookRegistry::types() const {
  std::vector<std::string> out;
  for (const auto& [type, entry] : entries_) out.push_back(type);
  return out;
}

BuiltHook HookRegistry::build(const config::Config& cfg, const HookBuildContext& ctx) const {
  const std::string type = cfg.get<std::string>("type");
  const auto it = entries_.find(type);
  if (it == entries_.end()) {
    std::string known;
    for (const auto& [name, entry] : entries_) known += (known.empty() ? "" : ", ") + name;
    throw config::ConfigError(
        cfg.origin("type"), cfg.path() + ".type",
        "unknown hook type '" + type + "' (registered: " + (known.empty() ? "none" : known) + ")");
  }
  BuiltHook built{it->second.factory(cfg, ctx), it->second.priority};
  if (cfg.has("priority")) {
    const std::string p = cfg.get<std::string>("priority");
    bool found = false;
    for (const auto& [name, value] : hook_priority_names()) {
      if (name == p) {
        built.priority = value;
        found = true;
      }
    }
    if (!found) {
      throw config::ConfigError(cfg.origin("priority"), cfg.path() + ".priority",
                                "expected HIGHEST, VERY_HIGH, HIGH, ABOVE_NORMAL, NORMAL, "
                                "BELOW_NORMAL, LOW, VERY_LOW or LOWEST; got \"" +
                                    p + "\"");
    }
  }
  return built;
}

const std::vector<std::string>& default_hook_keys() {
  static const std::vector<std::string> keys = {
      "timer",      "check_invalid_loss", "param_scheduler", "logger",
      "checkpoint", "visualization",      "sampler_seed"};
  return keys;
}

config::Config default_hooks_config(std::string_view yaml) {
  return config::parse_section("default_hooks", yaml, "<default_hooks>");
}

HookRegistry& hook_registry() {
  static HookRegistry registry;
  return registry;
}

}  // namespace ddp3d::engine
