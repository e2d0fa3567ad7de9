// Counting this process's threads (/proc/self/task), so the operator can prove on exit that
// it joined every thread it started.
#pragma once

#include <chrono>
#include <cstddef>

namespace ddp3d::op::runtime {

// Threads of this process now (0 if /proc is unavailable).
std::size_t live_threads();

// Waits up to `within` for live_threads() <= `count` (a joined thread can linger in /proc for
// a moment after join returns); returns the last count seen.
std::size_t wait_for_threads_at_most(std::size_t count, std::chrono::milliseconds within);

}  // namespace ddp3d::op::runtime
