// A signal noted by a signal handler for the train loop, which takes it at its next iteration
// boundary and hands it to the hooks' on_signal on the training thread (where collectives and
// checkpoint writes are allowed; a handler may do neither).
#pragma once

#include <atomic>

namespace ddp3d::engine {

class PendingSignal {
 public:
  // Async-signal-safe (a lock-free atomic store). A second signal before take() replaces it.
  void notify(int signal) noexcept { signal_.store(signal, std::memory_order_relaxed); }
  // The noted signal (0: none), cleared.
  int take() noexcept { return signal_.exchange(0, std::memory_order_relaxed); }

 private:
  static_assert(std::atomic<int>::is_always_lock_free);
  std::atomic<int> signal_{0};
};

}  // namespace ddp3d::engine
