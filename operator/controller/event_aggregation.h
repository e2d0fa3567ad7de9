// One core/v1 Event per repeated occurrence, as client-go's EventCorrelator does: the same
// (involved object uid, type, reason, message, source component) recorded again within a
// window updates the Event already written (count + 1, lastTimestamp) instead of adding one
// object per occurrence, so a condition that recurs does not flood the namespace's Events.
// Pure logic: the caller passes the time and sends the requests (act/action_applier.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace ddp3d::op::controller {

struct EventKey {
  std::string uid;  // the involved object's
  std::string type;
  std::string reason;
  std::string message;  // as sent (event_message)
  std::string component;
};

// An occurrence that repeats an Event still remembered: PATCH `name` to `count`.
struct EventRepeat {
  std::string name;
  int32_t count = 0;
};

// client-go's maxLruCacheEntries and aggregation interval.
inline constexpr std::size_t kEventCacheEntries = 4096;
inline constexpr int64_t kEventRepeatWindowSeconds = 600;

// Thread-safe: one per operator process, shared by the reconcile workers.
class EventAggregator {
 public:
  explicit EventAggregator(std::size_t capacity = kEventCacheEntries,
                           int64_t window_seconds = kEventRepeatWindowSeconds);

  // What an occurrence at `now_ns` (ns since the epoch) asks for: nullopt to create a new
  // Event (first occurrence, or the last one is older than the window), else the repeat.
  // Nothing is remembered until recorded().
  std::optional<EventRepeat> repeat_of(const EventKey& key, int64_t now_ns);
  // The Event `name` now says `count` occurrences, the last at `now_ns`. Past `capacity`
  // keys, the least recently recorded is forgotten (its next occurrence creates anew).
  void recorded(const EventKey& key, const std::string& name, int32_t count, int64_t now_ns);
  // The Event is gone (deleted, or expired by the API server's --event-ttl).
  void forget(const EventKey& key);
  std::size_t size() const;

 private:
  struct Entry {
    std::string key;
    std::string name;
    int32_t count = 0;
    int64_t last_ns = 0;
  };
  static std::string flat(const EventKey& key);

  const std::size_t capacity_;
  const int64_t window_ns_;
  mutable std::mutex mu_;
  std::list<Entry> lru_;  // most recently recorded first
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;
};

}  // namespace ddp3d::op::controller
