#include "operator/kube/object_cache.h"

#include <mutex>
#include <set>

#include "operator/kube/client.h"

namespace ddp3d::kube {

std::optional<web::json::value> ObjectCache::upsert(const web::json::value& obj) {
  const std::string key = object_key(obj);
  std::unique_lock lock(mu_);
  auto [it, inserted] = items_.try_emplace(key, obj);
  if (inserted) return std::nullopt;
  std::optional<web::json::value> old = std::move(it->second);
  it->second = obj;
  return old;
}

std::optional<web::json::value> ObjectCache::erase(const web::json::value& obj) {
  const std::string key = object_key(obj);
  std::unique_lock lock(mu_);
  auto it = items_.find(key);
  if (it == items_.end()) return std::nullopt;
  std::optional<web::json::value> old = std::move(it->second);
  items_.erase(it);
  return old;
}

void ObjectCache::replace_all(const std::vector<web::json::value>& objects,
                              const std::function<void(const web::json::value&)>& on_removed) {
  std::map<std::string, web::json::value> fresh;
  for (const auto& obj : objects) fresh.emplace(object_key(obj), obj);
  std::vector<web::json::value> removed;
  {
    std::unique_lock lock(mu_);
    for (auto& [key, obj] : items_)
      if (!fresh.count(key)) removed.push_back(std::move(obj));
    items_ = std::move(fresh);
  }
  // Outside the lock: a handler may read the cache.
  if (on_removed)
    for (const auto& obj : removed) on_removed(obj);
}

std::optional<web::json::value> ObjectCache::get(const std::string& key) const {
  std::shared_lock lock(mu_);
  auto it = items_.find(key);
  if (it == items_.end()) return std::nullopt;
  return it->second;
}

std::optional<web::json::value> ObjectCache::get(const std::string& ns,
                                                 const std::string& name) const {
  return get(object_key(ns, name));
}

std::vector<web::json::value> ObjectCache::list() const {
  std::shared_lock lock(mu_);
  std::vector<web::json::value> out;
  out.reserve(items_.size());
  for (const auto& [key, obj] : items_) out.push_back(obj);
  return out;
}

std::vector<web::json::value> ObjectCache::list_namespace(const std::string& ns) const {
  std::shared_lock lock(mu_);
  std::vector<web::json::value> out;
  // Keys are "ns/name" and the map is sorted, so one namespace is a contiguous range.
  const std::string prefix = ns + "/";
  for (auto it = items_.lower_bound(prefix); it != items_.end() && it->first.rfind(prefix, 0) == 0;
       ++it)
    out.push_back(it->second);
  return out;
}

std::vector<web::json::value> ObjectCache::list_matching(
    const std::map<std::string, std::string>& labels, const std::string& ns) const {
  std::vector<web::json::value> candidates = ns.empty() ? list() : list_namespace(ns);
  std::vector<web::json::value> out;
  for (auto& obj : candidates) {
    bool match = true;
    for (const auto& [k, v] : labels) {
      const auto& meta = obj.has_object_field("metadata") ? obj.at("metadata") : web::json::value();
      if (!meta.is_object() || !meta.has_object_field("labels") ||
          !meta.at("labels").has_string_field(k) || meta.at("labels").at(k).as_string() != v) {
        match = false;
        break;
      }
    }
    if (match) out.push_back(std::move(obj));
  }
  return out;
}

std::vector<std::string> ObjectCache::keys() const {
  std::shared_lock lock(mu_);
  std::vector<std::string> out;
  for (const auto& [key, obj] : items_) out.push_back(key);
  return out;
}

std::size_t ObjectCache::size() const {
  std::shared_lock lock(mu_);
  return items_.size();
}

}  // namespace ddp3d::kube
