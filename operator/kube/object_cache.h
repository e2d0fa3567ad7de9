// A thread-safe store of objects keyed by "namespace/name" (object_key()), the informer's
// local view of the server. Pure data structure, no I/O.
#pragma once

#include <cpprest/json.h>

#include <functional>
#include <map>
#include <optional>
#include <shared_mutex>
#include <string>
#include <vector>

namespace ddp3d::kube {

class ObjectCache {
 public:
  // Inserts or overwrites; returns the previous object if there was one.
  std::optional<web::json::value> upsert(const web::json::value& obj);
  // Removes by the object's key; returns what was stored.
  std::optional<web::json::value> erase(const web::json::value& obj);
  // Replaces the whole content (after a list). `on_removed` is called for each object that was
  // cached but is absent from `objects` — deletions the watch missed.
  void replace_all(const std::vector<web::json::value>& objects,
                   const std::function<void(const web::json::value&)>& on_removed = {});

  std::optional<web::json::value> get(const std::string& key) const;
  std::optional<web::json::value> get(const std::string& ns, const std::string& name) const;
  std::vector<web::json::value> list() const;
  std::vector<web::json::value> list_namespace(const std::string& ns) const;
  // Objects whose metadata.labels contain every pair of `labels`.
  std::vector<web::json::value> list_matching(const std::map<std::string, std::string>& labels,
                                              const std::string& ns = {}) const;
  std::vector<std::string> keys() const;
  std::size_t size() const;

 private:
  mutable std::shared_mutex mu_;
  std::map<std::string, web::json::value> items_;
};

}  // namespace ddp3d::kube
