#include "operator/kube/object_cache.h"

#include <algorithm>
#include <mutex>
#include <string_view>

#include "operator/kube/client.h"

namespace ddp3d::kube {

namespace {

std::string label_pair(std::string_view key, std::string_view value) {
  std::string out;
  out.reserve(key.size() + 1 + value.size());
  out.append(key).push_back('\0');  // label keys cannot contain NUL, so pairs never collide
  out.append(value);
  return out;
}

const web::json::value* object_field(const web::json::value& v, const char* key) {
  if (!v.is_object() || !v.has_field(key)) return nullptr;
  const web::json::value& f = v.at(key);
  return f.is_object() || f.is_array() ? &f : nullptr;
}

void insert_sorted(std::vector<std::string>& bucket, const std::string& key) {
  auto it = std::lower_bound(bucket.begin(), bucket.end(), key);
  if (it == bucket.end() || *it != key) bucket.insert(it, key);
}

void erase_sorted(std::unordered_map<std::string, std::vector<std::string>>& index,
                  const std::string& bucket_name, const std::string& key) {
  auto b = index.find(bucket_name);
  if (b == index.end()) return;
  auto it = std::lower_bound(b->second.begin(), b->second.end(), key);
  if (it != b->second.end() && *it == key) b->second.erase(it);
  if (b->second.empty()) index.erase(b);  // no empty buckets pile up as objects come and go
}

bool in_namespace(const std::string& key, const std::string& ns) {
  return ns.empty() ||
         (key.size() > ns.size() && key.compare(0, ns.size(), ns) == 0 && key[ns.size()] == '/');
}

}  // namespace

ObjectCache::Entry ObjectCache::entry_for(ObjectPtr obj) {
  Entry e;
  if (const auto* meta = obj ? object_field(*obj, "metadata") : nullptr) {
    if (const auto* labels = object_field(*meta, "labels"); labels && labels->is_object()) {
      for (const auto& [k, v] : labels->as_object())
        if (v.is_string()) e.label_pairs.push_back(label_pair(k, v.as_string()));
      std::sort(e.label_pairs.begin(), e.label_pairs.end());
    }
    if (const auto* refs = object_field(*meta, "ownerReferences"); refs && refs->is_array()) {
      for (const auto& ref : refs->as_array())
        if (ref.has_string_field("uid")) e.owner_uids.push_back(ref.at("uid").as_string());
    }
  }
  e.obj = std::move(obj);
  return e;
}

void ObjectCache::index(const std::string& key, const Entry& e) {
  for (const auto& p : e.label_pairs) insert_sorted(by_label_[p], key);
  for (const auto& uid : e.owner_uids) insert_sorted(by_owner_[uid], key);
}

void ObjectCache::unindex(const std::string& key, const Entry& e) {
  for (const auto& p : e.label_pairs) erase_sorted(by_label_, p, key);
  for (const auto& uid : e.owner_uids) erase_sorted(by_owner_, uid, key);
}

ObjectPtr ObjectCache::upsert(ObjectPtr obj) {
  if (!obj) return nullptr;
  const std::string key = object_key(*obj);
  Entry fresh = entry_for(std::move(obj));
  std::unique_lock lock(mu_);
  auto [it, inserted] = items_.try_emplace(key);
  ObjectPtr old;
  if (!inserted) {
    old = std::move(it->second.obj);
    unindex(key, it->second);
  }
  it->second = std::move(fresh);
  index(key, it->second);
  return old;
}

ObjectPtr ObjectCache::erase(const std::string& key) {
  std::unique_lock lock(mu_);
  auto it = items_.find(key);
  if (it == items_.end()) return nullptr;
  ObjectPtr old = std::move(it->second.obj);
  unindex(key, it->second);
  items_.erase(it);
  return old;
}

void ObjectCache::replace_all(std::vector<ObjectPtr> objects,
                              const std::function<void(const ObjectPtr&)>& on_removed) {
  std::map<std::string, Entry> fresh;
  for (auto& obj : objects) {
    if (!obj) continue;
    std::string key = object_key(*obj);
    fresh.insert_or_assign(std::move(key), entry_for(std::move(obj)));
  }
  std::vector<ObjectPtr> removed;
  {
    std::unique_lock lock(mu_);
    for (auto& [key, e] : items_)
      if (!fresh.count(key)) removed.push_back(std::move(e.obj));
    items_ = std::move(fresh);
    by_label_.clear();
    by_owner_.clear();
    for (const auto& [key, e] : items_) index(key, e);
  }
  // Outside the lock: a handler may read the cache.
  if (on_removed)
    for (const auto& obj : removed) on_removed(obj);
}

ObjectPtr ObjectCache::get(const std::string& key) const {
  std::shared_lock lock(mu_);
  auto it = items_.find(key);
  return it == items_.end() ? nullptr : it->second.obj;
}

ObjectPtr ObjectCache::get(const std::string& ns, const std::string& name) const {
  return get(object_key(ns, name));
}

std::vector<ObjectPtr> ObjectCache::list() const {
  std::shared_lock lock(mu_);
  std::vector<ObjectPtr> out;
  out.reserve(items_.size());
  for (const auto& [key, e] : items_) out.push_back(e.obj);
  return out;
}

std::vector<ObjectPtr> ObjectCache::list_namespace(const std::string& ns) const {
  std::shared_lock lock(mu_);
  std::vector<ObjectPtr> out;
  const std::string prefix = ns + "/";
  for (auto it = items_.lower_bound(prefix); it != items_.end() && it->first.rfind(prefix, 0) == 0;
       ++it)
    out.push_back(it->second.obj);
  return out;
}

std::vector<ObjectPtr> ObjectCache::resolve(const Bucket& keys, const std::string& ns,
                                            const std::vector<std::string>& also_labels) const {
  std::vector<ObjectPtr> out;
  for (const auto& key : keys) {
    if (!in_namespace(key, ns)) continue;
    auto it = items_.find(key);
    if (it == items_.end()) continue;
    const auto& have = it->second.label_pairs;
    const bool all = std::all_of(also_labels.begin(), also_labels.end(), [&](const auto& p) {
      return std::binary_search(have.begin(), have.end(), p);
    });
    if (all) out.push_back(it->second.obj);
  }
  return out;
}

std::vector<ObjectPtr> ObjectCache::list_matching(const std::map<std::string, std::string>& labels,
                                                  const std::string& ns) const {
  if (labels.empty()) return ns.empty() ? list() : list_namespace(ns);
  std::vector<std::string> pairs;
  pairs.reserve(labels.size());
  for (const auto& [k, v] : labels) pairs.push_back(label_pair(k, v));
  std::shared_lock lock(mu_);
  const Bucket* smallest = nullptr;
  for (const auto& p : pairs) {
    auto b = by_label_.find(p);
    if (b == by_label_.end()) return {};  // no object carries this pair
    if (!smallest || b->second.size() < smallest->size()) smallest = &b->second;
  }
  if (smallest == nullptr) return {};  // unreachable: `labels` is not empty
  return resolve(*smallest, ns, pairs);
}

std::vector<ObjectPtr> ObjectCache::list_owned_by(const std::string& owner_uid) const {
  std::shared_lock lock(mu_);
  auto b = by_owner_.find(owner_uid);
  if (b == by_owner_.end()) return {};
  return resolve(b->second, {}, {});
}

std::vector<std::string> ObjectCache::keys() const {
  std::shared_lock lock(mu_);
  std::vector<std::string> out;
  out.reserve(items_.size());
  for (const auto& [key, e] : items_) out.push_back(key);
  return out;
}

std::size_t ObjectCache::size() const {
  std::shared_lock lock(mu_);
  return items_.size();
}

}  // namespace ddp3d::kube
