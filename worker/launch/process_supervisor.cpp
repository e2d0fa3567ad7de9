#include "worker/launch/process_supervisor.h"

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <optional>

#include "common/exit_codes.h"
#include "common/log.h"

extern char** environ;

namespace ddp3d::launch {
namespace {

using Clock = std::chrono::steady_clock;

struct Child {
  const ChildSpec* spec;
  pid_t pid = -1;
  bool done = false;
  int status = 0;  // once done
};

// After a forwarded SIGTERM: every rank checkpointed and stopped (exit_code::kPreempted), or
// finished anyway (0). Then the node's exit code says "preempted, resumable" too.
bool all_preempted(const std::vector<Child>& children) {
  bool any = false;
  for (const Child& c : children) {
    if (!WIFEXITED(c.status)) return false;
    const int code = WEXITSTATUS(c.status);
    if (code != 0 && code != exit_code::kPreempted) return false;
    any = any || code == exit_code::kPreempted;
  }
  return any;
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* abbrev = sigabbrev_np(sig);
    return "was killed by signal " + std::to_string(sig) + " (SIG" + (abbrev ? abbrev : "?") + ")";
  }
  return "ended with status " + std::to_string(status);
}

int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

// Runs in the forked child: never returns.
[[noreturn]] void exec_child(const ChildSpec& spec, pid_t parent, const sigset_t& old_mask) {
  // A session of its own (and so a process group led by the rank): kill(-pid) reaches
  // whatever the rank spawned, and the scheduler's per-session CPU groups (autogroup) treat
  // each rank as torchrun's ranks are treated, instead of lumping them with the launcher.
  setsid();
  // If the launcher dies without cleaning up (SIGKILL), the ranks must not live on.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(128 + SIGKILL);
  sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  for (const auto& [k, v] : spec.env) setenv(k.c_str(), v.c_str(), 1);
  std::vector<char*> argv;
  for (const auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  execvp(argv[0], argv.data());
  std::fprintf(stderr, "ddp3d launch: cannot execute %s: %s\n", argv[0], std::strerror(errno));
  _exit(127);
}

// Signals every child not yet reaped. A reaped child's pid (and process-group id) may already
// belong to an unrelated process, so it is never signalled again; an unreaped one (running or
// a zombie) still holds its pid.
void signal_all(std::vector<Child>& children, int sig, KillFn kill_fn) {
  for (auto& c : children) {
    if (c.pid <= 0 || c.done) continue;
    // The child's whole process group; just the child if it has not called setsid() yet.
    if (kill_fn(-c.pid, sig) != 0) kill_fn(c.pid, sig);
  }
}

// If `c` has ended: kills what it left in its process group (e.g. data workers), then reaps
// it and returns true with its wait status. The group is signalled before the reap because
// until then the zombie holds the pid, so the group id cannot have been reused.
bool reap_if_ended(Child& c, int* status, KillFn kill_fn) {
  siginfo_t info{};
  if (waitid(P_PID, static_cast<id_t>(c.pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0 ||
      info.si_pid != c.pid) {
    return false;
  }
  kill_fn(-c.pid, SIGKILL);
  while (waitpid(c.pid, status, 0) < 0 && errno == EINTR) {
  }
  c.done = true;
  return true;
}

}  // namespace

SupervisorResult supervise(const std::vector<ChildSpec>& specs,
                           std::chrono::milliseconds grace_period, KillFn kill_fn) {
  sigset_t watched;
  sigemptyset(&watched);
  for (int s : {SIGCHLD, SIGTERM, SIGINT, SIGHUP}) sigaddset(&watched, s);
  sigset_t old_mask;
  sigprocmask(SIG_BLOCK, &watched, &old_mask);

  std::vector<Child> children;
  const pid_t self = getpid();
  for (const auto& spec : specs) {
    const pid_t pid = fork();
    if (pid < 0) {
      log::error(std::string("fork failed: ") + std::strerror(errno));
      signal_all(children, SIGKILL, kill_fn);
      sigprocmask(SIG_SETMASK, &old_mask, nullptr);
      return {1, spec.name};
    }
    if (pid == 0) exec_child(spec, self, old_mask);
    children.push_back({&spec, pid});
  }

  SupervisorResult result;
  std::optional<Clock::time_point> kill_at;
  bool forwarded = false;  // a termination signal was passed on to the ranks
  std::size_t running = children.size();
  while (running > 0) {
    // Reap everything that has ended.
    for (auto& c : children) {
      if (c.done) continue;
      int status = 0;
      if (!reap_if_ended(c, &status, kill_fn)) continue;
      c.status = status;
      --running;
      const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
      if (!ok && result.failed_name.empty() && !kill_at) {
        result.failed_name = c.spec->name;
        result.exit_code = exit_code_of(status);
        log::error(c.spec->name + " (pid " + std::to_string(c.pid) + ") " +
                   describe_status(status) + "; stopping the other ranks");
        signal_all(children, SIGTERM, kill_fn);
        kill_at = Clock::now() + grace_period;
      } else if (!ok) {
        log::info(c.spec->name + " (pid " + std::to_string(c.pid) + ") " + describe_status(status));
      }
    }
    if (running == 0) break;
    if (kill_at && Clock::now() >= *kill_at) {
      log::warning("grace period over: killing the remaining ranks");
      signal_all(children, SIGKILL, kill_fn);
      kill_at = Clock::now() + std::chrono::hours(24);
    }
    timespec tick{0, 100'000'000};
    siginfo_t info{};
    const int sig = sigtimedwait(&watched, &info, &tick);
    if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP) {
      log::warning(std::string("received SIG") + sigabbrev_np(sig) + ": forwarding to the ranks");
      signal_all(children, sig, kill_fn);
      forwarded = true;
      if (result.failed_name.empty()) result.exit_code = 128 + sig;
      if (!kill_at) kill_at = Clock::now() + grace_period;
    }
  }
  sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  if (forwarded && result.failed_name.empty() && all_preempted(children)) {
    result.exit_code = exit_code::kPreempted;
  }
  return result;
}

}  // namespace ddp3d::launch
