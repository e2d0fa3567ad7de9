// run_bounded's cancellation: a stop request kills the program's whole process group at once
// (the wait wakes on it rather than polling for it), reaps the program and says so; a stop
// requested before the call starts nothing.
#include "operator/kube/bounded_process.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <stop_token>
#include <string>
#include <thread>

#include "temp_dir.h"

namespace ddp3d::kube {
namespace {

using namespace std::chrono_literals;
using testing::TempDir;
using Clock = std::chrono::steady_clock;
using Ms = std::chrono::duration<double, std::milli>;

// The pid written to `file`, once it is there (0 after `timeout`).
int wait_for_pid(const std::filesystem::path& file, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    std::ifstream in(file);
    int pid = 0;
    std::string line;
    if (std::getline(in, line) && !line.empty() && line.back() == '.') {
      pid = std::stoi(line);
      if (pid > 0) return pid;
    }
    std::this_thread::sleep_for(5ms);
  }
  return 0;
}

// The process state letter from /proc/<pid>/stat ('Z' for a zombie), or 0 when there is no
// such process at all.
char state_of(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return 0;
  const auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() ? line[close + 2] : '?';
}

// Gone or a zombie waiting for someone else's wait (a grandchild, reparented): not running.
bool stopped_within(int pid, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    const char s = state_of(pid);
    if (s == 0 || s == 'Z') return true;
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(2ms);
  }
}

ProcessLimits limits_with(std::stop_token stop) {
  ProcessLimits limits;
  limits.deadline = Clock::now() + 60s;  // far away: only the cancellation can end the run
  limits.stop = std::move(stop);
  return limits;
}

TEST(RunBounded, ACancelKillsTheGroupAtOnceAndReapsTheProgram) {
  TempDir dir;
  const auto pids = dir.path() / "pids";
  // The program (in its own group) leaves a `sleep 60` of its own and sleeps itself; both
  // hold its stdout open. "." ends the line once both pids are in.
  const std::string script = "sleep 60 & echo \"$$ $! .\" > '" + pids.string() + "'; sleep 60";
  std::stop_source stop;
  auto run = std::async(std::launch::async, [&] {
    return run_bounded({"sh", "-c", script}, environment_with({}), limits_with(stop.get_token()));
  });
  ASSERT_GT(wait_for_pid(pids, 10s), 0) << "the program did not start";
  int program = 0, child = 0;
  {
    std::ifstream in(pids);
    in >> program >> child;
  }
  ASSERT_GT(program, 0);
  ASSERT_GT(child, 0);
  ASSERT_NE(state_of(program), 0);
  ASSERT_EQ(run.wait_for(200ms), std::future_status::timeout) << "it ended by itself";

  const auto t0 = Clock::now();
  stop.request_stop();
  ASSERT_EQ(run.wait_for(10s), std::future_status::ready) << "the cancel did not end the run";
  const ProcessResult r = run.get();
  const auto took = Clock::now() - t0;
  std::printf("run_bounded returned %.2f ms after the cancel\n", Ms(took).count());
  EXPECT_LT(took, 100ms) << Ms(took).count() << " ms: the wait must wake on the cancel";
  EXPECT_EQ(r.outcome, ProcessResult::Outcome::kCancelled);
  // The program itself was reaped before run_bounded returned: no process, no zombie.
  EXPECT_EQ(state_of(program), 0) << "program " << program << " left behind";
  errno = 0;
  EXPECT_EQ(waitpid(program, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
  // Its own child, in the same group, was killed with it (init reaps it).
  EXPECT_TRUE(stopped_within(child, 100ms)) << "child " << child << " still running";
}

TEST(RunBounded, AStopRequestedBeforehandStartsNothing) {
  TempDir dir;
  const auto marker = dir.path() / "ran";
  std::stop_source stop;
  stop.request_stop();
  const auto t0 = Clock::now();
  const ProcessResult r = run_bounded({"sh", "-c", "touch '" + marker.string() + "'"},
                                      environment_with({}), limits_with(stop.get_token()));
  EXPECT_EQ(r.outcome, ProcessResult::Outcome::kCancelled);
  EXPECT_LT(Clock::now() - t0, 100ms);
  std::this_thread::sleep_for(100ms);
  EXPECT_FALSE(std::filesystem::exists(marker)) << "the program ran";
}

TEST(RunBounded, AStopThatIsNeverRequestedChangesNothing) {
  std::stop_source stop;
  const ProcessResult r = run_bounded({"sh", "-c", "printf out; printf err >&2; exit 4"},
                                      environment_with({}), limits_with(stop.get_token()));
  EXPECT_EQ(r.outcome, ProcessResult::Outcome::kExited);
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_EQ(r.stdout_text, "out");
  EXPECT_EQ(r.stderr_tail, "err");
}

}  // namespace
}  // namespace ddp3d::kube
