#include "operator/controller/expectations.h"

#include <algorithm>

namespace ddp3d::op::controller {

using web::json::value;

namespace {

std::string meta_string(const value& obj, const char* key) {
  if (!obj.is_object() || !obj.has_field("metadata")) return "";
  const value& meta = obj.at("metadata");
  return meta.is_object() && meta.has_string_field(key) ? meta.at(key).as_string() : "";
}

}  // namespace

void ChildExpectations::expect_create(const std::string& job, const std::string& object,
                                      Clock::time_point now) {
  std::lock_guard lock(mu_);
  jobs_[job].creates[object] = now;
}

void ChildExpectations::expect_delete(const std::string& job, const std::string& object,
                                      Clock::time_point now) {
  std::lock_guard lock(mu_);
  jobs_[job].deletes[object] = now;
}

void ChildExpectations::created(const std::string& job, const std::string& object) {
  std::lock_guard lock(mu_);
  auto it = jobs_.find(job);
  if (it == jobs_.end()) return;
  it->second.creates.erase(object);
  if (it->second.creates.empty() && it->second.deletes.empty()) jobs_.erase(it);
}

void ChildExpectations::deleted(const std::string& job, const std::string& object) {
  std::lock_guard lock(mu_);
  auto it = jobs_.find(job);
  if (it == jobs_.end()) return;
  it->second.deletes.erase(object);
  if (it->second.creates.empty() && it->second.deletes.empty()) jobs_.erase(it);
}

std::optional<Clock::duration> ChildExpectations::pending(const std::string& job,
                                                          Clock::time_point now) {
  std::lock_guard lock(mu_);
  auto it = jobs_.find(job);
  if (it == jobs_.end()) return std::nullopt;
  std::optional<Clock::duration> left;
  for (auto* in_flight : {&it->second.creates, &it->second.deletes}) {
    for (auto e = in_flight->begin(); e != in_flight->end();) {
      const Clock::duration remaining = e->second + timeout_ - now;
      if (remaining <= Clock::duration::zero()) {
        e = in_flight->erase(e);  // timed out: counts as met
        continue;
      }
      left = left ? std::min(*left, remaining) : remaining;
      ++e;
    }
  }
  if (!left) jobs_.erase(it);
  return left;
}

void ChildExpectations::forget(const std::string& job) {
  std::lock_guard lock(mu_);
  jobs_.erase(job);
}

std::size_t ChildExpectations::jobs_waiting() const {
  std::lock_guard lock(mu_);
  return jobs_.size();
}

void StatusExpectations::wrote(const std::string& key, const value& sent, ObjectPtr written,
                               Clock::time_point now) {
  if (!written) return;
  const std::string uid = meta_string(*written, "uid");
  std::lock_guard lock(mu_);
  Record& r = records_[key];
  // Writes on top of our own unobserved write extend the chain of versions the cache may
  // still show; a new object under the same name (another uid) starts a new one.
  if (r.uid != uid) r.superseded.clear();
  r.uid = uid;
  r.superseded.insert(meta_string(sent, "resourceVersion"));
  r.superseded.erase(meta_string(*written, "resourceVersion"));
  r.written = std::move(written);
  r.at = now;
}

StatusExpectations::ObjectPtr StatusExpectations::freshest(const std::string& key, ObjectPtr cached,
                                                           Clock::time_point now) {
  std::lock_guard lock(mu_);
  auto it = records_.find(key);
  if (it == records_.end() || !cached) return cached;
  const Record& r = it->second;
  const bool cache_behind = meta_string(*cached, "uid") == r.uid &&
                            r.superseded.count(meta_string(*cached, "resourceVersion")) > 0 &&
                            now - r.at < timeout_;
  if (cache_behind) return r.written;
  records_.erase(it);  // the cache has caught up (or moved past us): it is the truth again
  return cached;
}

void StatusExpectations::forget(const std::string& key) {
  std::lock_guard lock(mu_);
  records_.erase(key);
}

std::size_t StatusExpectations::size() const {
  std::lock_guard lock(mu_);
  return records_.size();
}

}  // namespace ddp3d::op::controller
