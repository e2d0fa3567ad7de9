#include "operator/kube/work_queue.h"

namespace ddp3d::kube {

WorkQueue::WorkQueue() : WorkQueue(std::make_shared<RealClock>(), nullptr) {}

WorkQueue::WorkQueue(std::shared_ptr<Clock> clock, std::unique_ptr<RateLimiter> limiter)
    : clock_(std::move(clock)), limiter_(std::move(limiter)) {
  if (!limiter_) limiter_ = default_controller_rate_limiter(clock_);
}

WorkQueue::~WorkQueue() {
  shut_down_now();
}

void WorkQueue::add_locked(const std::string& item) {
  if (shutting_down_) return;
  if (!dirty_.insert(item).second) return;  // already queued (or will be re-queued on done)
  if (processing_.count(item)) return;      // done() queues it again
  queue_.push_back(item);
  cv_.notify_one();
}

void WorkQueue::add(const std::string& item) {
  std::lock_guard lock(mu_);
  add_locked(item);
}

void WorkQueue::add_after(const std::string& item, duration delay) {
  std::lock_guard lock(mu_);
  if (shutting_down_) return;
  if (delay <= duration::zero()) {
    add_locked(item);
    return;
  }
  const auto ready = clock_->now() + delay;
  auto [it, inserted] = waiting_.emplace(item, ready);
  if (!inserted && ready < it->second) it->second = ready;
  // Wake a waiting get() so it recomputes how long to sleep.
  cv_.notify_all();
}

void WorkQueue::add_rate_limited(const std::string& item) {
  add_after(item, limiter_->when(item));
}

void WorkQueue::forget(const std::string& item) {
  limiter_->forget(item);
}

int WorkQueue::num_requeues(const std::string& item) const {
  return limiter_->num_requeues(item);
}

void WorkQueue::promote_due_locked() {
  if (waiting_.empty()) return;
  const auto now = clock_->now();
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    if (it->second <= now) {
      const std::string item = it->first;
      it = waiting_.erase(it);
      add_locked(item);
    } else {
      ++it;
    }
  }
}

std::optional<std::string> WorkQueue::get_until(std::optional<Clock::time_point> deadline) {
  std::unique_lock lock(mu_);
  for (;;) {
    promote_due_locked();
    if (shutting_down_ && (!drain_ || queue_.empty())) return std::nullopt;
    if (!queue_.empty()) {
      std::string item = std::move(queue_.front());
      queue_.pop_front();
      dirty_.erase(item);
      processing_.insert(item);
      return item;
    }
    Clock::time_point wake = Clock::time_point::max();
    for (const auto& [item, ready] : waiting_) wake = std::min(wake, ready);
    if (deadline) {
      if (clock_->now() >= *deadline) return std::nullopt;
      wake = std::min(wake, *deadline);
    }
    clock_->wait_until(cv_, lock, wake);
  }
}

std::optional<std::string> WorkQueue::get() {
  return get_until(std::nullopt);
}

std::optional<std::string> WorkQueue::get_for(duration timeout) {
  return get_until(clock_->now() + timeout);
}

void WorkQueue::done(const std::string& item) {
  std::lock_guard lock(mu_);
  processing_.erase(item);
  if (dirty_.count(item)) {
    queue_.push_back(item);
    cv_.notify_one();
  }
}

void WorkQueue::shut_down() {
  std::lock_guard lock(mu_);
  shutting_down_ = true;
  waiting_.clear();
  cv_.notify_all();
}

void WorkQueue::shut_down_now() {
  std::lock_guard lock(mu_);
  shutting_down_ = true;
  drain_ = false;
  waiting_.clear();
  cv_.notify_all();
}

bool WorkQueue::shutting_down() const {
  std::lock_guard lock(mu_);
  return shutting_down_;
}

std::size_t WorkQueue::len() const {
  std::lock_guard lock(mu_);
  return queue_.size();
}

std::size_t WorkQueue::delayed_len() const {
  std::lock_guard lock(mu_);
  return waiting_.size();
}

std::size_t WorkQueue::processing_len() const {
  std::lock_guard lock(mu_);
  return processing_.size();
}

}  // namespace ddp3d::kube
