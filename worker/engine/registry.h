// Registries from a config's `type` name to a factory, mmengine-style:
//   model: {type: PointPillars, ...}  ->  model_registry().build(cfg.node("model"))
// Component libraries (models, datasets, evaluators) expose a registration function that adds
// their factories; register_builtin_components() (components.cpp) calls each one explicitly, so
// nothing depends on static-initialiser order or the linker keeping unreferenced objects.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "worker/config/config.h"
#include "worker/engine/dataset.h"
#include "worker/engine/evaluator.h"
#include "worker/engine/model.h"

namespace ddp3d::engine {

template <typename T>
class Registry {
 public:
  // Gets the config node of the component (the mapping with `type`), e.g. cfg.node("model").
  using Factory = std::function<std::shared_ptr<T>(const config::Config&)>;

  // `kind` names the registry in errors ("model", "dataset", "evaluator").
  explicit Registry(std::string kind) : kind_(std::move(kind)) {}

  // Throws std::logic_error when `type` is already registered.
  void add(const std::string& type, Factory factory);
  bool contains(const std::string& type) const { return factories_.count(type) != 0; }
  std::vector<std::string> types() const;
  // Builds the component named by cfg's `type`. An unknown type throws config::ConfigError
  // naming the key, its file and the registered types. Errors from the factory pass through.
  std::shared_ptr<T> build(const config::Config& cfg) const;

 private:
  std::string kind_;
  std::map<std::string, Factory> factories_;
};

Registry<Model>& model_registry();
Registry<Dataset>& dataset_registry();
Registry<Evaluator>& evaluator_registry();

// Registers every built-in component (idempotent; call before building from a config).
void register_builtin_components();

// --- implementation of the template (small; kept here so any T works) ---

template <typename T>
void Registry<T>::add(const std::string& type, Factory factory) {
  if (!factories_.emplace(type, std::move(factory)).second) {
    throw std::logic_error(kind_ + " type '" + type + "' is registered twice");
  }
}

template <typename T>
std::vector<std::string> Registry<T>::types() const {
  std::vector<std::string> out;
  for (const auto& entry : factories_) out.push_back(entry.first);
  return out;
}

template <typename T>
std::shared_ptr<T> Registry<T>::build(const config::Config& cfg) const {
  const std::string type = cfg.get<std::string>("type");
  const auto it = factories_.find(type);
  if (it == factories_.end()) {
    std::string known;
    for (const auto& entry : factories_) known += (known.empty() ? "" : ", ") + entry.first;
    const std::string key = cfg.path().empty() ? "type" : cfg.path() + ".type";
    throw config::ConfigError(cfg.origin("type"), key,
                              "unknown " + kind_ + " type '" + type +
                                  "' (registered: " + (known.empty() ? "none" : known) + ")");
  }
  return it->second(cfg);
}

}  // namespace ddp3d::engine
