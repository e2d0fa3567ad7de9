#include "operator/controller/slow_start.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace ddp3d::op::controller {

std::exception_ptr run_slow_start(std::size_t n, std::size_t max_width,
                                  const std::function<void(std::size_t)>& task) {
  max_width = std::max<std::size_t>(max_width, 1);
  std::vector<std::exception_ptr> errors(n);
  std::mutex mu;
  std::condition_variable cv;
  std::size_t next = 0, running = 0, succeeded = 0;
  bool failed = false;
  auto window = [&] { return failed ? 1 : std::min(max_width, 1 + succeeded); };

  auto drain = [&] {
    std::unique_lock lock(mu);
    for (;;) {
      cv.wait(lock, [&] { return next >= n || running < window(); });
      if (next >= n) return;
      const std::size_t i = next++;
      ++running;
      lock.unlock();
      try {
        task(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
      lock.lock();
      --running;
      if (errors[i]) {
        failed = true;
      } else {
        ++succeeded;
      }
      cv.notify_all();
    }
  };
  {
    std::vector<std::jthread> helpers;
    const std::size_t threads = std::min(n, max_width);
    for (std::size_t t = 1; t < threads; ++t) helpers.emplace_back(drain);
    drain();
  }  // helpers joined here
  for (auto& e : errors)
    if (e) return e;
  return nullptr;
}

}  // namespace ddp3d::op::controller
