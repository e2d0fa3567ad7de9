#include "operator/kube/request_deadline.h"

#include <algorithm>

namespace ddp3d::kube {

namespace {
thread_local std::optional<ScopedRequestDeadline::time_point> t_deadline;
}  // namespace

ScopedRequestDeadline::ScopedRequestDeadline(time_point deadline) : previous_(t_deadline) {
  t_deadline = previous_ ? std::min(*previous_, deadline) : deadline;
}

ScopedRequestDeadline::~ScopedRequestDeadline() {
  t_deadline = previous_;
}

std::optional<ScopedRequestDeadline::time_point> ScopedRequestDeadline::current() {
  return t_deadline;
}

std::chrono::steady_clock::time_point request_deadline(
    std::chrono::steady_clock::duration fallback) {
  const auto own = std::chrono::steady_clock::now() + fallback;
  return t_deadline ? std::min(*t_deadline, own) : own;
}

}  // namespace ddp3d::kube
