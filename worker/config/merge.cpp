#include "worker/config/merge.h"

#include <string_view>
#include <unordered_map>

#include "worker/config/config.h"

namespace ddp3d::config {
namespace {

constexpr const char* kDelete = "_delete_";

std::string join(const std::string& key, const std::string& child) {
  return key.empty() ? child : key + "." + child;
}

// Removes `_delete_` from the mapping `v` (not below it) and returns its value.
bool take_delete(Value& v, const std::string& key) {
  const Value* flag = v.find(kDelete);
  if (flag == nullptr) return false;
  if (flag->kind() != Value::Kind::kBool) {
    throw ConfigError(flag->origin().to_string(), join(key, kDelete),
                      "expected true or false, got " + flag->describe());
  }
  const bool value = flag->as_bool();
  v.erase(kDelete);
  return value;
}

}  // namespace

void strip_delete(Value& v, const std::string& key) {
  if (v.is_map()) {
    take_delete(v, key);
    for (auto& [k, child] : v.entries()) strip_delete(child, join(key, k));
  } else if (v.is_list()) {
    for (std::size_t i = 0; i < v.items().size(); ++i) {
      strip_delete(v.items()[i], join(key, std::to_string(i)));
    }
  }
}

void merge_into(Value& base, Value child, const std::string& key) {
  if (!child.is_map()) {
    strip_delete(child, key);
    base = std::move(child);
    return;
  }
  const bool replace = take_delete(child, key);
  if (replace || !base.is_map()) {
    strip_delete(child, key);
    base = std::move(child);
    return;
  }
  // Base's keys, hashed to their positions: looking each child key up by a scan of base made
  // merging two mappings of n keys quadratic. The views point into base's keys (which the
  // reserve keeps in place while keys are appended) and child's (alive until we return).
  std::vector<Value::Entry>& entries = base.entries();
  entries.reserve(entries.size() + child.entries().size());
  std::unordered_map<std::string_view, std::size_t> position;
  position.reserve(entries.capacity());
  for (std::size_t i = 0; i < entries.size(); ++i) position.emplace(entries[i].first, i);
  for (auto& [k, value] : child.entries()) {
    const auto it = position.find(k);
    if (it != position.end()) {
      merge_into(entries[it->second].second, std::move(value), join(key, k));
    } else {
      strip_delete(value, join(key, k));
      position.emplace(k, entries.size());
      entries.emplace_back(k, std::move(value));
    }
  }
  // The merged mapping now reports the file that touched it last.
  base.set_origin(child.origin());
}

}  // namespace ddp3d::config
