#include "operator/runtime/signal_stop.h"

#include <pthread.h>

#include <ctime>
#include <string>

#include "common/log.h"

namespace ddp3d::op::runtime {

sigset_t block_stop_signals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

SignalStop::SignalStop(const sigset_t& signals)
    : thread_([this, signals](const std::stop_token& st) {
        // A short timeout so the destructor's stop request is seen promptly.
        const timespec tick{0, 100'000'000};
        while (!st.stop_requested()) {
          const int sig = sigtimedwait(&signals, nullptr, &tick);
          if (sig > 0) {
            log::info(std::string("received ") + (sig == SIGTERM ? "SIGTERM" : "SIGINT") +
                      "; shutting down");
            source_.request_stop();
            return;
          }
        }
      }) {}

SignalStop::~SignalStop() {
  thread_.request_stop();
  thread_.join();
}

}  // namespace ddp3d::op::runtime
