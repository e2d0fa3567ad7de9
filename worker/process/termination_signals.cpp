#include "worker/process/termination_signals.h"

#include <atomic>
#include <stdexcept>

namespace ddp3d::process {
namespace {

std::atomic<engine::PendingSignal*> g_pending{nullptr};
std::atomic<int> g_seen{0};

extern "C" void on_termination_signal(int signal) {
  // Async-signal-safe only: atomics, signal(), raise().
  if (g_seen.fetch_add(1) > 0) {
    std::signal(signal, SIG_DFL);
    std::raise(signal);
    return;
  }
  if (engine::PendingSignal* pending = g_pending.load()) pending->notify(signal);
}

}  // namespace

TerminationSignals::TerminationSignals(engine::PendingSignal& pending) {
  engine::PendingSignal* expected = nullptr;
  if (!g_pending.compare_exchange_strong(expected, &pending))
    throw std::logic_error("TerminationSignals: already installed");
  g_seen.store(0);
  struct sigaction sa {};
  sa.sa_handler = on_termination_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;  // a read or wait in progress continues; the loop polls the flag
  sigaction(SIGTERM, &sa, &old_term_);
  sigaction(SIGINT, &sa, &old_int_);
}

TerminationSignals::~TerminationSignals() {
  sigaction(SIGTERM, &old_term_, nullptr);
  sigaction(SIGINT, &old_int_, nullptr);
  g_pending.store(nullptr);
}

}  // namespace ddp3d::process
