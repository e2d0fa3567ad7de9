// The supervisor with real child processes (/bin/sh): exit codes, and that no signal ever
// targets a child it already reaped (whose pid another process may have taken since).
#include "worker/launch/process_supervisor.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "common/exit_codes.h"

namespace ddp3d::launch {
namespace {

using std::chrono::milliseconds;

std::atomic<int> g_kills{0};
std::atomic<int> g_kills_of_reaped{0};

// Signals as ::kill does, first checking that the target is still an unreaped child of ours
// (running, or a zombie not yet waited for): waitid(WNOWAIT) then succeeds without reaping.
int checked_kill(pid_t pid, int sig) {
  ++g_kills;
  siginfo_t info{};
  const pid_t target = pid < 0 ? -pid : pid;
  if (waitid(P_PID, static_cast<id_t>(target), &info, WEXITED | WNOHANG | WNOWAIT) != 0 &&
      errno == ECHILD) {
    ++g_kills_of_reaped;
  }
  return ::kill(pid, sig);
}

// A live (not zombie) process has this pid.
bool is_alive(pid_t pid) {
  FILE* stat = std::fopen(("/proc/" + std::to_string(pid) + "/stat").c_str(), "r");
  if (!stat) return false;
  int ignored_pid = 0;
  char comm[256] = {};
  char state = '?';
  const bool read = std::fscanf(stat, "%d %255s %c", &ignored_pid, comm, &state) == 3;
  std::fclose(stat);
  return read && state != 'Z' && state != 'X';
}

ChildSpec shell(const std::string& name, const std::string& script) {
  return {name, {"/bin/sh", "-c", script}, {}};
}

class Supervisor : public ::testing::Test {
 protected:
  void SetUp() override {
    g_kills = 0;
    g_kills_of_reaped = 0;
  }
};

TEST_F(Supervisor, AllSucceedExitsZero) {
  const auto r =
      supervise({shell("a", "exit 0"), shell("b", "exit 0")}, milliseconds(2000), checked_kill);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(r.failed_name.empty());
  EXPECT_EQ(g_kills_of_reaped, 0);
}

TEST_F(Supervisor, FirstFailureStopsTheOthersAndGivesItsCode) {
  // "ok" ends at once and is reaped before "bad" fails; "slow" is still running then. The
  // teardown must signal "slow" only, never the reaped "ok" nor "bad" itself.
  const auto r = supervise(
      {shell("ok", "exit 0"), shell("bad", "sleep 0.5; exit 3"), shell("slow", "exec sleep 30")},
      milliseconds(5000), checked_kill);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.failed_name, "bad");
  EXPECT_GT(g_kills, 0);  // the teardown (and the reaped children's group kills) went through
  EXPECT_EQ(g_kills_of_reaped, 0);
}

TEST_F(Supervisor, PeerLostExitIsPassedOn) {
  const auto r = supervise({shell("rank 0", "exec sleep 30"),
                            shell("rank 1", "exit " + std::to_string(exit_code::kPeerLost))},
                           milliseconds(5000), checked_kill);
  EXPECT_EQ(r.exit_code, exit_code::kPeerLost);
  EXPECT_EQ(r.failed_name, "rank 1");
  EXPECT_EQ(g_kills_of_reaped, 0);
}

TEST_F(Supervisor, TornDownRanksDoNotHideTheFirstFailure) {
  // rank 1 exits 1 first; rank 0 answers the teardown's SIGTERM with kPeerLost. The launcher
  // reports the rank that failed, not the collateral one.
  const auto r = supervise({shell("rank 0", "trap 'exit " + std::to_string(exit_code::kPeerLost) +
                                                "' TERM; while :; do sleep 0.05; done"),
                            shell("rank 1", "sleep 0.3; exit 1")},
                           milliseconds(5000), checked_kill);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.failed_name, "rank 1");
  EXPECT_EQ(g_kills_of_reaped, 0);
}

TEST_F(Supervisor, StragglersInAFinishedRanksGroupAreKilled) {
  // The rank exits but leaves a background child in its process group, which must not
  // outlive it. The straggler writes its pid; after supervise() it must be gone.
  char dir_template[] = "/tmp/ddp3d-supervisor-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string pid_file = std::string(dir_template) + "/straggler.pid";
  const auto r = supervise({shell("rank 0", "sleep 30 & echo $! > " + pid_file + "; exit 0")},
                           milliseconds(2000), checked_kill);
  EXPECT_EQ(r.exit_code, 0);
  FILE* f = std::fopen(pid_file.c_str(), "r");
  ASSERT_NE(f, nullptr);
  int straggler = 0;
  ASSERT_EQ(std::fscanf(f, "%d", &straggler), 1);
  std::fclose(f);
  std::remove(pid_file.c_str());
  rmdir(dir_template);
  // The SIGKILL takes effect asynchronously, and the dead straggler may stay a zombie until
  // its new parent reaps it: wait (with a deadline) until no live process has that pid.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  bool alive = true;
  while (alive && std::chrono::steady_clock::now() < deadline) {
    alive = is_alive(straggler);
    if (alive) std::this_thread::yield();
  }
  EXPECT_FALSE(alive) << "straggler pid " << straggler << " survived its rank";
  EXPECT_EQ(g_kills_of_reaped, 0);
}

}  // namespace
}  // namespace ddp3d::launch
