#include "operator/controller/event_aggregation.h"

#include <algorithm>

namespace ddp3d::op::controller {

EventAggregator::EventAggregator(std::size_t capacity, int64_t window_seconds)
    : capacity_(std::max<std::size_t>(capacity, 1)), window_ns_(window_seconds * 1000000000) {}

std::string EventAggregator::flat(const EventKey& key) {
  // Length-prefixed, so no field's content can make two keys collide.
  std::string out;
  for (const std::string* f : {&key.uid, &key.type, &key.reason, &key.message, &key.component}) {
    out += std::to_string(f->size()) + ':' + *f;
  }
  return out;
}

std::optional<EventRepeat> EventAggregator::repeat_of(const EventKey& key, int64_t now_ns) {
  const std::lock_guard lock(mu_);
  const auto it = index_.find(flat(key));
  if (it == index_.end()) return std::nullopt;
  const Entry& e = *it->second;
  // A clock that went back counts as within the window: the Event is the same occurrence run.
  if (now_ns - e.last_ns > window_ns_) return std::nullopt;
  return EventRepeat{e.name, e.count + 1};
}

void EventAggregator::recorded(const EventKey& key, const std::string& name, int32_t count,
                               int64_t now_ns) {
  const std::lock_guard lock(mu_);
  std::string k = flat(key);
  if (const auto it = index_.find(k); it != index_.end()) {
    lru_.erase(it->second);
    index_.erase(it);
  }
  lru_.push_front(Entry{k, name, count, now_ns});
  index_[std::move(k)] = lru_.begin();
  while (lru_.size() > capacity_) {
    index_.erase(lru_.back().key);
    lru_.pop_back();
  }
}

void EventAggregator::forget(const EventKey& key) {
  const std::lock_guard lock(mu_);
  const auto it = index_.find(flat(key));
  if (it == index_.end()) return;
  lru_.erase(it->second);
  index_.erase(it);
}

std::size_t EventAggregator::size() const {
  const std::lock_guard lock(mu_);
  return lru_.size();
}

}  // namespace ddp3d::op::controller
