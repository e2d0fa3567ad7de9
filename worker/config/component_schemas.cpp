#include "worker/config/component_schemas.h"

#include <algorithm>
#include <stdexcept>

namespace ddp3d::config {

void ComponentSchemas::add(const std::string& kind, const std::string& type,
                           std::vector<Field> fields, ComponentCheck check) {
  if (contains(kind, type)) {
    throw std::logic_error(kind + " type '" + type + "' has its schema registered twice");
  }
  variants_[kind].emplace_back(type, std::move(fields));
  if (check) checks_.emplace(std::make_pair(kind, type), std::move(check));
}

bool ComponentSchemas::contains(const std::string& kind, const std::string& type) const {
  const auto it = variants_.find(kind);
  return it != variants_.end() &&
         std::any_of(it->second.begin(), it->second.end(),
                     [&](const auto& variant) { return variant.first == type; });
}

const ComponentSchemas::Variants& ComponentSchemas::variants(const std::string& kind) const {
  static const Variants kNone;
  const auto it = variants_.find(kind);
  return it == variants_.end() ? kNone : it->second;
}

const ComponentCheck* ComponentSchemas::check(const std::string& kind,
                                              const std::string& type) const {
  const auto it = checks_.find({kind, type});
  return it == checks_.end() ? nullptr : &it->second;
}

ComponentSchemas& component_schemas() {
  static ComponentSchemas schemas;
  return schemas;
}

}  // namespace ddp3d::config
