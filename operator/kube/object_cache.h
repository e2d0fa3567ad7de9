// A thread-safe store of objects keyed by "namespace/name" (object_key()), the informer's
// local view of the server. Pure data structure, no I/O.
//
// Objects are held as shared immutable values and handed out as such: get() and the list
// calls copy pointers, never JSON, so a reconcile that reads its job's pods costs what those
// pods cost, not what the whole cache holds. Lookups go through indices kept in step with
// every write: by namespace (the key order), by label pair and by owner (ownerReferences uid).
#pragma once

#include <cpprest/json.h>

#include <functional>
#include <map>
#include <memory>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ddp3d::kube {

using ObjectPtr = std::shared_ptr<const web::json::value>;

class ObjectCache {
 public:
  // Inserts or overwrites; returns the previous object (null if there was none).
  ObjectPtr upsert(ObjectPtr obj);
  // Removes by key ("namespace/name"); returns what was stored (null if nothing).
  ObjectPtr erase(const std::string& key);
  // Replaces the whole content (after a list). `on_removed` is called for each object that was
  // cached but is absent from `objects` — deletions the watch missed.
  void replace_all(std::vector<ObjectPtr> objects,
                   const std::function<void(const ObjectPtr&)>& on_removed = {});

  ObjectPtr get(const std::string& key) const;
  ObjectPtr get(const std::string& ns, const std::string& name) const;
  // All objects, in key order.
  std::vector<ObjectPtr> list() const;
  std::vector<ObjectPtr> list_namespace(const std::string& ns) const;
  // Objects whose metadata.labels contain every pair of `labels` (in `ns` unless it is ""),
  // in key order. Walks the smallest matching label bucket, not the cache.
  std::vector<ObjectPtr> list_matching(const std::map<std::string, std::string>& labels,
                                       const std::string& ns = {}) const;
  // Objects with an ownerReference to `owner_uid`, in key order.
  std::vector<ObjectPtr> list_owned_by(const std::string& owner_uid) const;
  std::vector<std::string> keys() const;
  std::size_t size() const;

 private:
  struct Entry {
    ObjectPtr obj;
    // What the indices hold for this key, so they are undone exactly on overwrite and erase.
    std::vector<std::string> label_pairs;  // "key\0value", sorted
    std::vector<std::string> owner_uids;
  };
  using Bucket = std::vector<std::string>;  // keys, sorted
  using Index = std::unordered_map<std::string, Bucket>;

  static Entry entry_for(ObjectPtr obj);
  void index(const std::string& key, const Entry& e);
  void unindex(const std::string& key, const Entry& e);
  std::vector<ObjectPtr> resolve(const Bucket& keys, const std::string& ns,
                                 const std::vector<std::string>& also_labels) const;

  mutable std::shared_mutex mu_;
  // Sorted by "ns/name": one namespace is a contiguous range (the namespace index).
  std::map<std::string, Entry> items_;
  Index by_label_;
  Index by_owner_;
};

}  // namespace ddp3d::kube
