// Time source for the work queue and rate limiters, so tests can drive time by hand.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <vector>

namespace ddp3d::kube {

class Clock {
 public:
  using time_point = std::chrono::steady_clock::time_point;
  using duration = std::chrono::steady_clock::duration;
  virtual ~Clock() = default;
  virtual time_point now() const = 0;
  // Waits on `cv` (whose mutex `lock` holds) until notified or `deadline` passes on this clock.
  // May wake spuriously; callers re-check their condition.
  virtual void wait_until(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                          time_point deadline) = 0;
};

class RealClock final : public Clock {
 public:
  time_point now() const override { return std::chrono::steady_clock::now(); }
  void wait_until(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                  time_point deadline) override {
    if (deadline == time_point::max())
      cv.wait(lock);  // no deadline: avoid overflow inside
    else
      cv.wait_until(lock, deadline);
  }
};

// Time moves only through advance(); waiters are woken on every advance. The objects that wait
// on it (queues) must outlive any concurrent advance() call.
class FakeClock final : public Clock {
 public:
  FakeClock() = default;
  time_point now() const override;
  void wait_until(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                  time_point deadline) override;
  void advance(duration d);
  // Number of threads currently blocked in wait_until (lets tests wait for a consumer to park).
  int waiters() const;
  // Waits, in real time and up to `timeout`, until at least `n` threads are blocked in
  // wait_until (a consumer has parked); returns whether they are.
  bool wait_for_waiters(int n, std::chrono::milliseconds timeout) const;

 private:
  struct Waiter {
    std::condition_variable* cv;
    std::mutex* mu;
  };
  mutable std::mutex mu_;
  time_point now_{};
  std::vector<Waiter> waiters_;
  mutable std::condition_variable waiters_changed_;
};

}  // namespace ddp3d::kube
