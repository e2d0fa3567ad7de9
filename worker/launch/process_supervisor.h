// Runs a set of child processes as one unit: the first failure (or a signal to us) stops
// them all. Each child leads its own process group, so whatever it spawned is stopped too.
#pragma once

#include <chrono>
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
  int exit_code = 0;        // 0, the failed child's code, or 128 + signal
  std::string failed_name;  // empty when nothing failed
};

SupervisorResult supervise(const std::vector<ChildSpec>& children,
                           std::chrono::milliseconds grace_period);

}  // namespace ddp3d::launch
