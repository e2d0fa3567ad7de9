// Runs independent API requests concurrently under a slow-start window (TCP's, in the spirit
// of kube-controller-manager's slowStartBatch): the first request goes alone, each success
// lets one more run at once, up to `max_width`. A gang's 64 pod creates then take a few
// round trips instead of 64, while a template that every create rejects (quota, admission)
// is found after one request. After a failure the window stays at one: every remaining
// request still gets its try (a pod that cannot be deleted must not keep the others holding
// GPUs), without a burst of doomed requests.
#pragma once

#include <cstddef>
#include <exception>
#include <functional>

namespace ddp3d::op::controller {

// Calls task(i) for every i in [0, n), at most `max_width` at once (the caller's thread
// among them) and never more than one plus the successes so far. Returns the first exception
// (by index) a task threw, or null; every task runs either way. `max_width` 0 counts as 1.
std::exception_ptr run_slow_start(std::size_t n, std::size_t max_width,
                                  const std::function<void(std::size_t)>& task);

}  // namespace ddp3d::op::controller
