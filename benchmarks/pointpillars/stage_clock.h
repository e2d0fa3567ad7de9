// Per-stage wall-clock accumulation for the benchmark driver, and the observer that times the
// head's anchor-target assignment: Anchor3DHead::targets opens a RECORD_USER_SCOPE named
// kAssignScope (free when no callback is registered); while an AssignTimer lives, a
// RecordFunction callback restricted to user scopes adds each such scope's duration to it.
#pragma once

#include <ATen/record_function.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace ddp3d::bench {

inline constexpr const char* kAssignScope = "ddp3d::Anchor3DHead::targets";

// Seconds per named stage, summed over the timed iterations.
class StageClock {
 public:
  using Clock = std::chrono::steady_clock;
  void add(const std::string& stage, double seconds) { seconds_[stage] += seconds; }
  double seconds(const std::string& stage) const;
  void reset() { seconds_.clear(); }

 private:
  std::map<std::string, double> seconds_;
};

inline double seconds_since(StageClock::Clock::time_point t) {
  return std::chrono::duration<double>(StageClock::Clock::now() - t).count();
}

// Process-wide: registers the callback on construction, removes it on destruction. Not
// reentrant (one at a time), which is all the driver needs.
class AssignTimer {
 public:
  AssignTimer();
  ~AssignTimer();
  AssignTimer(const AssignTimer&) = delete;
  AssignTimer& operator=(const AssignTimer&) = delete;
  // Seconds spent in kAssignScope since the last take(), then zero.
  double take();

 private:
  at::CallbackHandle handle_;
};

}  // namespace ddp3d::bench
