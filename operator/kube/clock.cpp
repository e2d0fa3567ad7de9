#include "operator/kube/clock.h"

#include <algorithm>

namespace ddp3d::kube {

Clock::time_point FakeClock::now() const {
  std::lock_guard lock(mu_);
  return now_;
}

void FakeClock::wait_until(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                           time_point deadline) {
  {
    std::lock_guard g(mu_);
    if (now_ >= deadline) return;
    waiters_.push_back({&cv, lock.mutex()});
  }
  waiters_changed_.notify_all();
  // advance() must take the caller's mutex before notifying, so a notification cannot slip in
  // between the registration above and this wait (the caller still holds that mutex here).
  cv.wait(lock);
  std::lock_guard g(mu_);
  auto it = std::find_if(waiters_.begin(), waiters_.end(),
                         [&](const Waiter& w) { return w.cv == &cv && w.mu == lock.mutex(); });
  if (it != waiters_.end()) waiters_.erase(it);
}

void FakeClock::advance(duration d) {
  std::vector<Waiter> wake;
  {
    std::lock_guard g(mu_);
    now_ += d;
    wake = waiters_;
  }
  for (const Waiter& w : wake) {
    std::lock_guard g(*w.mu);
    w.cv->notify_all();
  }
}

bool FakeClock::wait_for_waiters(int n, std::chrono::milliseconds timeout) const {
  std::unique_lock g(mu_);
  return waiters_changed_.wait_for(g, timeout,
                                   [&] { return static_cast<int>(waiters_.size()) >= n; });
}

int FakeClock::waiters() const {
  std::lock_guard g(mu_);
  return static_cast<int>(waiters_.size());
}

}  // namespace ddp3d::kube
