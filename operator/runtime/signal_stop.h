// SIGTERM/SIGINT as a stop request: the signals are blocked in every thread and one thread
// waits for them, so no code runs in signal-handler context.
#pragma once

#include <csignal>
#include <stop_token>
#include <thread>

namespace ddp3d::op::runtime {

// Blocks SIGTERM and SIGINT in the calling thread and returns that set. Call it first in
// main, before any thread exists: threads inherit the mask, so none of them takes a signal.
sigset_t block_stop_signals();

class SignalStop {
 public:
  // Waits for `signals` (blocked by block_stop_signals) on a thread of its own.
  explicit SignalStop(const sigset_t& signals);
  ~SignalStop();  // joins the waiting thread (within one poll interval)
  SignalStop(const SignalStop&) = delete;
  SignalStop& operator=(const SignalStop&) = delete;

  // Requested when a signal arrives.
  std::stop_token token() const { return source_.get_token(); }

 private:
  std::stop_source source_;
  std::jthread thread_;
};

}  // namespace ddp3d::op::runtime
