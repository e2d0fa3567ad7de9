// The config schemas of registered components, by kind ("model", "backbone", "dataset", ...)
// and `type`. A component library adds its own (the keys next to `type: SECOND`, and the
// cross-key check of such a node); Schema::component(kind) branches on `type` over whatever is
// registered when a config is validated, so a new backbone needs no edit anywhere else.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "worker/config/schema.h"

namespace ddp3d::config {

class CrossCheck;

// Cross-key check of one component node, run after the whole config validated: `key` is the
// node's dotted key ("model", "model.backbone").
using ComponentCheck = std::function<void(CrossCheck& check, const std::string& key)>;

class ComponentSchemas {
 public:
  using Variants = std::vector<std::pair<std::string, std::vector<Field>>>;

  // Throws std::logic_error when (kind, type) is already registered.
  void add(const std::string& kind, const std::string& type, std::vector<Field> fields,
           ComponentCheck check = {});
  bool contains(const std::string& kind, const std::string& type) const;
  // In registration order (docs and "one of:" messages list them so).
  const Variants& variants(const std::string& kind) const;
  // Null when the component registered no check.
  const ComponentCheck* check(const std::string& kind, const std::string& type) const;

 private:
  std::map<std::string, Variants> variants_;
  std::map<std::pair<std::string, std::string>, ComponentCheck> checks_;
};

// The process-wide set that ddp3d_schema() and check_consistency() read.
ComponentSchemas& component_schemas();

}  // namespace ddp3d::config
