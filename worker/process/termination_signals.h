// SIGTERM and SIGINT during `ddp3d train`: the first one is noted in a PendingSignal for the
// train loop (which checkpoints and stops every rank at one iteration, hooks/preemption_hook.h);
// a second one ends the process at once, as without the handler (Ctrl-C twice).
#pragma once

#include <csignal>

#include "worker/engine/pending_signal.h"

namespace ddp3d::process {

class TerminationSignals {
 public:
  // Installs the handlers; one instance at a time. `pending` must outlive this object.
  explicit TerminationSignals(engine::PendingSignal& pending);
  ~TerminationSignals();  // restores the previous handlers
  TerminationSignals(const TerminationSignals&) = delete;
  TerminationSignals& operator=(const TerminationSignals&) = delete;

 private:
  struct sigaction old_term_ {};
  struct sigaction old_int_ {};
};

}  // namespace ddp3d::process
