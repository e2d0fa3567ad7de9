#include "operator/kube/bounded_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <system_error>

#include "common/io/unique_fd.h"

extern char** environ;

namespace ddp3d::kube {

namespace {

using io::UniqueFd;

using Clock = std::chrono::steady_clock;

// After the program exits, how long a child of it may keep the pipes open before the rest
// of the group is killed.
constexpr auto kExitGrace = std::chrono::milliseconds(500);
// Without pidfd (old kernels) the exit is noticed by polling this often.
constexpr auto kExitPollFallback = std::chrono::milliseconds(10);

[[noreturn]] void fail(const char* what) {
  throw std::system_error(errno, std::generic_category(), what);
}

void make_pipe(UniqueFd& read_end, UniqueFd& write_end) {
  std::array<int, 2> fds{};
  if (pipe2(fds.data(), O_CLOEXEC) != 0) fail("pipe2");
  *read_end.out() = fds[0];
  *write_end.out() = fds[1];
}

int poll_timeout_ms(Clock::time_point until, bool exit_polled) {
  auto left = std::chrono::ceil<std::chrono::milliseconds>(until - Clock::now());
  if (exit_polled) left = std::min(left, kExitPollFallback);
  return static_cast<int>(std::max<std::chrono::milliseconds::rep>(left.count(), 0));
}

}  // namespace

std::vector<std::pair<std::string, std::string>> environment_with(
    const std::vector<std::pair<std::string, std::string>>& overrides) {
  std::set<std::string> replaced;
  for (const auto& kv : overrides) replaced.insert(kv.first);
  std::vector<std::pair<std::string, std::string>> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry(*e);
    const auto eq = entry.find('=');
    std::string name = entry.substr(0, eq);
    if (replaced.contains(name)) continue;
    env.emplace_back(std::move(name), eq == std::string::npos ? "" : entry.substr(eq + 1));
  }
  env.insert(env.end(), overrides.begin(), overrides.end());
  return env;
}

ProcessResult run_bounded(const std::vector<std::string>& argv_in,
                          const std::vector<std::pair<std::string, std::string>>& env,
                          const ProcessLimits& limits) {
  // Everything the child needs is built before fork: after it only async-signal-safe calls.
  std::vector<std::string> arg_strings = argv_in;
  std::vector<std::string> env_strings;
  env_strings.reserve(env.size());
  for (const auto& [k, v] : env) {
    std::string entry = k;
    entry += '=';
    entry += v;
    env_strings.push_back(std::move(entry));
  }
  std::vector<char*> argv, envp;
  for (auto& s : arg_strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::string exec_failed = "cannot execute ";
  if (!arg_strings.empty()) exec_failed += arg_strings[0];
  exec_failed += '\n';

  ProcessResult result;
  if (limits.stop.stop_requested()) {
    result.outcome = ProcessResult::Outcome::kCancelled;
    return result;
  }
  // Readable once a stop is requested: the poll below wakes on it.
  UniqueFd stop_fd;
  std::optional<std::stop_callback<std::function<void()>>> on_stop;
  if (limits.stop.stop_possible()) {
    *stop_fd.out() = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (!stop_fd.open()) fail("eventfd");
    on_stop.emplace(limits.stop, std::function<void()>([fd = stop_fd.get()] {
                      const std::uint64_t one = 1;
                      (void)!write(fd, &one, sizeof one);
                    }));
  }

  UniqueFd out_r, out_w, err_r, err_w;
  make_pipe(out_r, out_w);
  make_pipe(err_r, err_w);
  const pid_t pid = fork();
  if (pid < 0) fail("fork");
  if (pid == 0) {
    setpgid(0, 0);  // its own group, so the whole of it can be killed at once
    const int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    dup2(out_w.get(), 1);
    dup2(err_w.get(), 2);
    execvpe(argv[0], argv.data(), envp.data());
    (void)!write(2, exec_failed.data(), exec_failed.size());
    _exit(127);
  }
  setpgid(pid, pid);  // also here: whichever runs first; the other fails harmlessly
  out_w.reset();
  err_w.reset();
  // Readable once the child has exited (-1 on kernels before 5.3: then polled for). Called
  // through syscall(): glibc 2.36 declares pidfd_open without C linkage for C++.
  UniqueFd pidfd(static_cast<int>(syscall(SYS_pidfd_open, pid, 0)));

  std::string stderr_text;
  bool reaped = false;
  int status = 0;
  Clock::time_point until = limits.deadline;
  auto kill_group = [&] { kill(-pid, SIGKILL); };
  auto try_reap = [&] {
    if (waitpid(pid, &status, WNOHANG) == pid) {
      reaped = true;
      until = std::min(limits.deadline, Clock::now() + kExitGrace);
    }
  };

  for (;;) {
    if (reaped && !out_r.open() && !err_r.open()) break;
    if (Clock::now() >= until) {
      if (!reaped) result.outcome = ProcessResult::Outcome::kTimedOut;
      break;
    }
    std::array<pollfd, 4> fds{pollfd{out_r.get(), POLLIN, 0}, pollfd{err_r.get(), POLLIN, 0},
                              pollfd{reaped ? -1 : pidfd.get(), POLLIN, 0},
                              pollfd{stop_fd.get(), POLLIN, 0}};
    const int ready = poll(fds.data(), fds.size(), poll_timeout_ms(until, !pidfd.open()));
    if (ready < 0 && errno != EINTR) {
      const int error = errno;
      kill_group();
      if (!reaped) waitpid(pid, &status, 0);
      errno = error;
      fail("poll");
    }
    if (limits.stop.stop_requested()) {
      result.outcome = ProcessResult::Outcome::kCancelled;
      break;
    }
    for (int i = 0; i < 2 && ready > 0; ++i) {
      if (fds[i].fd < 0 || (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      std::array<char, 16384> buf{};
      const ssize_t n = read(fds[i].fd, buf.data(), buf.size());
      if (n <= 0) {
        (i == 0 ? out_r : err_r).reset();
        continue;
      }
      std::string& sink = i == 0 ? result.stdout_text : stderr_text;
      sink.append(buf.data(), static_cast<std::size_t>(n));
      if (i == 1 && stderr_text.size() > 2 * limits.stderr_tail_bytes)
        stderr_text.erase(0, stderr_text.size() - limits.stderr_tail_bytes);
    }
    if (result.stdout_text.size() > limits.max_stdout_bytes) {
      result.outcome = ProcessResult::Outcome::kStdoutTooLarge;
      break;
    }
    if (!reaped && (!pidfd.open() || (fds[2].revents & POLLIN) != 0)) try_reap();
  }

  // Until reaped, the group id cannot be reused; after that, a pipe still open means a member
  // of the group still holds it, so the group still exists.
  if (!reaped || out_r.open() || err_r.open()) kill_group();
  if (!reaped) {
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  if (result.outcome == ProcessResult::Outcome::kExited) {
    if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  }
  if (stderr_text.size() > limits.stderr_tail_bytes)
    stderr_text = "..." + stderr_text.substr(stderr_text.size() - limits.stderr_tail_bytes);
  result.stderr_tail = std::move(stderr_text);
  return result;
}

}  // namespace ddp3d::kube
