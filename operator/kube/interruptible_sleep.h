// Sleeping that a stop request cuts short (internal helper).
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stop_token>

namespace ddp3d::kube::detail {

// Sleeps up to `d`; returns false if `stop` was requested (at once or during the sleep).
inline bool sleep_for(std::chrono::milliseconds d, const std::stop_token& stop) {
  std::mutex mu;
  std::condition_variable_any cv;
  std::unique_lock lock(mu);
  return !cv.wait_for(lock, stop, d, [] { return false; });
}

}  // namespace ddp3d::kube::detail
