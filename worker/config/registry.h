// Registries from a config's `type` name to a factory, mmengine-style:
//   model: {type: PointPillars, ...}  ->  model_registry().build(cfg.node("model"))
// One registry per kind of component (model, dataset, evaluator, backbone, ...). The keys a
// type accepts are its schema, registered apart in component_schemas() (a config is validated
// before anything is built, and tools validate configs without building them). A component
// that needs more than its config (the optimizer wrapper: the model it updates) names those
// arguments after T: Registry<OptimWrapper, const OptimWrapperBuildContext&>.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "worker/config/config.h"

namespace ddp3d::config {

template <typename T, typename... Args>
class Registry {
 public:
  // Gets the config node of the component (the mapping with `type`), e.g. cfg.node("model").
  using Factory = std::function<std::shared_ptr<T>(const Config&, Args...)>;

  // `kind` names the registry in errors ("model", "dataset", "backbone").
  explicit Registry(std::string kind) : kind_(std::move(kind)) {}

  // Throws std::logic_error when `type` is already registered.
  void add(const std::string& type, Factory factory) {
    if (!factories_.emplace(type, std::move(factory)).second) {
      throw std::logic_error(kind_ + " type '" + type + "' is registered twice");
    }
  }
  bool contains(const std::string& type) const { return factories_.count(type) != 0; }
  std::vector<std::string> types() const {
    std::vector<std::string> out;
    for (const auto& entry : factories_) out.push_back(entry.first);
    return out;
  }
  // Builds the component named by cfg's `type`. An unknown type throws ConfigError naming the
  // key, its file and the registered types. Errors from the factory pass through.
  std::shared_ptr<T> build(const Config& cfg, Args... args) const {
    return build_at(cfg, "type", std::forward<Args>(args)...);
  }
  // The same with the type at `type_key` below cfg, for a factory that reads around the
  // component's own node (cfg = model, type_key = "bbox_head.type").
  std::shared_ptr<T> build_at(const Config& cfg, std::string_view type_key, Args... args) const {
    const std::string type = cfg.get<std::string>(type_key);
    const auto it = factories_.find(type);
    if (it == factories_.end()) {
      std::string known;
      for (const auto& entry : factories_) known += (known.empty() ? "" : ", ") + entry.first;
      const std::string key =
          cfg.path().empty() ? std::string(type_key) : cfg.path() + "." + std::string(type_key);
      throw ConfigError(cfg.origin(type_key), key,
                        "unknown " + kind_ + " type '" + type +
                            "' (registered: " + (known.empty() ? "none" : known) + ")");
    }
    return it->second(cfg, std::forward<Args>(args)...);
  }

 private:
  std::string kind_;
  std::map<std::string, Factory> factories_;
};

}  // namespace ddp3d::config
