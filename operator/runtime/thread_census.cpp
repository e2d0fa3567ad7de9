#include "operator/runtime/thread_census.h"

#include <filesystem>
#include <system_error>
#include <thread>

namespace ddp3d::op::runtime {

std::size_t live_threads() {
  std::error_code ec;
  std::size_t n = 0;
  for (std::filesystem::directory_iterator it("/proc/self/task", ec), end; !ec && it != end;
       it.increment(ec)) {
    ++n;
  }
  return n;
}

std::size_t wait_for_threads_at_most(std::size_t count, std::chrono::milliseconds within) {
  const auto deadline = std::chrono::steady_clock::now() + within;
  for (;;) {
    const std::size_t n = live_threads();
    if (n <= count || std::chrono::steady_clock::now() >= deadline) return n;
    // Polling is the only way: the kernel offers no wait for a task to leave /proc.
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace ddp3d::op::runtime
