// A rate-limited, de-duplicating work queue of string keys with client-go's semantics:
//  - an item is queued at most once ("dirty" set); adding it again while queued is a no-op;
//  - an item being processed (between get() and done()) is never handed to a second worker;
//    if it is added meanwhile, it is queued again exactly once when done() is called;
//  - add_after() delays an add; add_rate_limited() delays by the rate limiter; forget() resets
//    the item's failure history;
//  - shut_down() wakes all get() callers, which return nullopt once the queue is drained
//    (shut_down) or immediately (shut_down_now); later adds are ignored.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "operator/kube/clock.h"
#include "operator/kube/rate_limiter.h"

namespace ddp3d::kube {

class WorkQueue {
 public:
  using duration = Clock::duration;

  // Defaults: RealClock and default_controller_rate_limiter().
  WorkQueue();
  WorkQueue(std::shared_ptr<Clock> clock, std::unique_ptr<RateLimiter> limiter);
  ~WorkQueue();
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  void add(const std::string& item);
  // Adds after `delay` (<= 0: now). A later, earlier deadline for the same item wins.
  void add_after(const std::string& item, duration delay);
  void add_rate_limited(const std::string& item);
  void forget(const std::string& item);
  int num_requeues(const std::string& item) const;

  // Blocks until an item is ready; nullopt after shutdown. The caller must call done(item).
  std::optional<std::string> get();
  // Like get() but gives up after `timeout` of this queue's clock (nullopt).
  std::optional<std::string> get_for(duration timeout);
  void done(const std::string& item);

  void shut_down();      // drain: get() keeps returning queued items, then nullopt
  void shut_down_now();  // get() returns nullopt at once
  bool shutting_down() const;

  std::size_t len() const;          // items ready now (excludes delayed and in-process)
  std::size_t delayed_len() const;  // items waiting for their add_after deadline
  std::size_t processing_len() const;

 private:
  void add_locked(const std::string& item);
  void promote_due_locked();
  std::optional<std::string> get_until(std::optional<Clock::time_point> deadline);

  std::shared_ptr<Clock> clock_;
  std::unique_ptr<RateLimiter> limiter_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> queue_;
  std::set<std::string> dirty_;
  std::set<std::string> processing_;
  std::map<std::string, Clock::time_point> waiting_;  // item -> ready time
  bool shutting_down_ = false;
  bool drain_ = true;
};

}  // namespace ddp3d::kube
