// Runs a set of child processes as one unit: the first failure (or a signal to us) stops
// them all. Each child leads its own process group, so whatever it spawned is stopped too.
// A child is never signalled once reaped (its pid may belong to another process by then).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <csignal>
#include <map>
#include <string>
#include <vector>

namespace ddp3d::launch {

struct ChildSpec {
  std::string name;                        // for messages, e.g. "rank 3 (local rank 1)"
  std::vector<std::string> argv;           // argv[0] is looked up in PATH
  std::map<std::string, std::string> env;  // added to (and overriding) our environment
};

struct SupervisorResult {
  // 0, the first failed child's code (exit_code::kPeerLost when that child stopped because a
  // peer was lost), or 128 + signal.
  int exit_code = 0;
  std::string failed_name;  // empty when nothing failed
};

// How the supervisor sends signals: ::kill, or a test's wrapper around it.
using KillFn = int (*)(pid_t, int);

SupervisorResult supervise(const std::vector<ChildSpec>& children,
                           std::chrono::milliseconds grace_period, KillFn kill_fn = ::kill);

}  // namespace ddp3d::launch
