// Runs a helper program (an exec credential plugin) so that it cannot hang or flood its
// caller: a total deadline, a cancellation, a cap on what it prints, and its own process
// group, which is killed as a whole on timeout, cancellation or overflow, so a child it forked
// cannot keep the pipes open.
#pragma once

#include <chrono>
#include <cstddef>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

namespace ddp3d::kube {

struct ProcessLimits {
  std::chrono::steady_clock::time_point deadline;  // for the whole run, output included
  std::size_t max_stdout_bytes = std::size_t{1024} * 1024;
  std::size_t stderr_tail_bytes = 2000;  // only the end of stderr is kept
  // A stop request kills the group at once (the wait wakes on it, it is not polled for); a
  // stop requested before the call starts nothing.
  std::stop_token stop;
};

struct ProcessResult {
  enum class Outcome {
    kExited,          // `exit_code` / `signal` tell how
    kTimedOut,        // killed at the deadline
    kStdoutTooLarge,  // killed once stdout passed max_stdout_bytes
    kCancelled,       // killed (or never started) because `stop` was requested
  };
  Outcome outcome = Outcome::kExited;
  int exit_code = -1;  // when it exited normally
  int signal = 0;      // when a signal ended it
  std::string stdout_text;
  std::string stderr_tail;
};

// `argv[0]` is looked up in PATH (as execvp does); `env` is the child's whole environment,
// stdin is /dev/null. Once the program has exited, its output is read until the pipes close
// or, if a child of it still holds them, for a short grace period; what remains of its
// process group is then killed. Throws std::system_error when pipes or fork fail.
ProcessResult run_bounded(const std::vector<std::string>& argv,
                          const std::vector<std::pair<std::string, std::string>>& env,
                          const ProcessLimits& limits);

// The environment of this process with `overrides` replacing (or adding) variables by name.
std::vector<std::pair<std::string, std::string>> environment_with(
    const std::vector<std::pair<std::string, std::string>>& overrides);

}  // namespace ddp3d::kube
