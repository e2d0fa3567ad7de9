// A deadline that bounds every Client request the current thread makes while it is in scope,
// in the spirit of a Go context with a deadline: the leader elector puts its renewals under
// the renew deadline without threading a parameter through every Client call.
#pragma once

#include <chrono>
#include <optional>

namespace ddp3d::kube {

class ScopedRequestDeadline {
 public:
  using time_point = std::chrono::steady_clock::time_point;
  // Nested scopes keep the earlier of the two deadlines.
  explicit ScopedRequestDeadline(time_point deadline);
  ~ScopedRequestDeadline();
  ScopedRequestDeadline(const ScopedRequestDeadline&) = delete;
  ScopedRequestDeadline& operator=(const ScopedRequestDeadline&) = delete;

  // The deadline in force on this thread, if any.
  static std::optional<time_point> current();

 private:
  std::optional<time_point> previous_;
};

// `fallback` (from now) or the scoped deadline, whichever comes first.
std::chrono::steady_clock::time_point request_deadline(
    std::chrono::steady_clock::duration fallback);

}  // namespace ddp3d::kube
