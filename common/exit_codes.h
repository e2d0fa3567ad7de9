// Process exit codes with a meaning shared by the worker (ranks, launcher) and the operator,
// which reads them from the terminated container to classify a failure.
#pragma once

namespace ddp3d::exit_code {

// A rank (or the launcher on its behalf) stopped because another rank or node of the group was
// lost: a collective failed on a peer, or a peer stopped heartbeating. It is collateral, not
// the cause; the operator restarts the gang and blames the rank that failed first. Above 128
// so that restartPolicy ExitCode treats it as retryable; no Linux signal is 200 - 128.
inline constexpr int kPeerLost = 200;

// Training stopped on SIGTERM (a pod's termination, a drain, a preemption) after every rank
// agreed on one iteration and its checkpoint was written: `--resume auto` continues it at the
// same sample. The operator starts a new attempt without spending backoffLimit.
inline constexpr int kPreempted = 201;

}  // namespace ddp3d::exit_code
