// Per-stage time accumulation for the benchmark driver — wall time and the calling thread's
// CPU time (with one intra-op thread the compute of every stage runs on the calling thread, so
// on a loaded machine CPU time shows the work done, wall time the work plus the CPU share the
// scheduler granted) — and the observer that times the head's anchor-target assignment:
// Anchor3DHead::targets opens a RECORD_USER_SCOPE named kAssignScope (free when no callback is
// registered); while an AssignTimer lives, a RecordFunction callback restricted to user
// scopes adds each such scope's wall and CPU time to it.
#pragma once

#include <ATen/record_function.h>

#include <chrono>
#include <map>
#include <string>

namespace ddp3d::bench {

inline constexpr const char* kAssignScope = "ddp3d::Anchor3DHead::targets";

using Clock = std::chrono::steady_clock;

// This thread's CPU time in seconds.
double thread_cpu_s();

// A point in time on both clocks.
struct Mark {
  Clock::time_point wall = Clock::now();
  double cpu = thread_cpu_s();
};

// Seconds since a mark on both clocks.
struct Span {
  double wall = 0.0;
  double cpu = 0.0;
};
Span since(const Mark& m);

// Seconds per named stage, summed over the timed iterations.
class StageClock {
 public:
  void add(const std::string& stage, const Span& s);
  void add(const std::string& stage, const Mark& m) { add(stage, since(m)); }
  // Wall time only (a stage measured between events of another thread, e.g. DDP's).
  void add_wall(const std::string& stage, double wall_s);
  Span total(const std::string& stage) const;  // zero when never added
  void reset() { spans_.clear(); }

 private:
  std::map<std::string, Span> spans_;
};

// Process-wide: registers the callback on construction, removes it on destruction. Not
// reentrant (one at a time), which is all the driver needs.
class AssignTimer {
 public:
  AssignTimer();
  ~AssignTimer();
  AssignTimer(const AssignTimer&) = delete;
  AssignTimer& operator=(const AssignTimer&) = delete;
  // Time spent in kAssignScope since the last take(), then zero.
  Span take();

 private:
  at::CallbackHandle handle_;
};

}  // namespace ddp3d::bench
