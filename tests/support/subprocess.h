// Test helpers for multi-process tests: start real processes with extra environment, wait
// with a deadline, capture their output, find free loopback ports.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace ddp3d::testing {

struct ProcessResult {
  int exit_code = -1;  // exit status, or 128 + signal; -1 if it had to be killed at the deadline
  bool timed_out = false;
  std::string output;  // stdout and stderr together
  std::chrono::duration<double> elapsed{};
};

class Subprocess {
 public:
  // Starts argv[0] (PATH lookup) with `env` added to the current environment; output goes
  // to a temporary file read by wait().
  Subprocess(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env);
  ~Subprocess();  // kills the process group if still running
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  pid_t pid() const { return pid_; }
  // Waits up to `timeout`; on time-out kills the process group with SIGKILL.
  ProcessResult wait(std::chrono::milliseconds timeout);
  // Output so far (the process may still be running).
  std::string output_so_far() const;

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  std::string output_path_;
  std::chrono::steady_clock::time_point start_;
};

ProcessResult run(const std::vector<std::string>& argv,
                  const std::map<std::string, std::string>& env, std::chrono::milliseconds timeout);

// A TCP port on 127.0.0.1 that was free a moment ago.
int free_port();

// True if a process with this pid exists (and is not a zombie).
bool process_alive(pid_t pid);

// Path of a built binary, e.g. binary_path("worker/ddp3d"), from DDP3D_BINARY_DIR.
std::string binary_path(const std::string& relative);
std::string source_path(const std::string& relative);

// A fresh empty directory under the system temp dir.
std::string make_temp_dir(const std::string& prefix);

}  // namespace ddp3d::testing
