// Starts N copies of a rank executable the way `ddp3d launch` / torchrun would (RANK,
// LOCAL_RANK, WORLD_SIZE, MASTER_ADDR=127.0.0.1, MASTER_PORT=<free port>), with a hard
// timeout: a test can never hang on a stuck collective.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace ddp3d::test {

struct RankResult {
  int exit_code = -1;   // -1 when killed by a signal
  int signal = 0;       // the signal that ended it, 0 if it exited
  bool killed = false;  // we killed it (timeout, or a peer failed and it did not exit)
  std::string output;   // stdout and stderr together
};

struct SpawnResult {
  std::vector<RankResult> ranks;
  double seconds = 0.0;
  bool all_succeeded() const;
  std::string describe() const;  // per-rank status and output, for failure messages
};

struct SpawnOptions {
  int world_size = 2;
  // Ranks per simulated node (LOCAL_WORLD_SIZE; GROUP_RANK = rank / it); 0: all on one node.
  int local_world_size = 0;
  std::chrono::milliseconds timeout{std::chrono::seconds(60)};
  // After the first rank fails, how long the others get to exit by themselves.
  std::chrono::milliseconds grace_after_failure{std::chrono::seconds(15)};
  std::string work_dir;  // each rank's output goes to <work_dir>/rank<r>.log
};

// A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0, then released).
int free_port();

// Runs `argv` (argv[0] is the executable path) once per rank and waits for all of them.
SpawnResult spawn_ranks(const std::vector<std::string>& argv, const SpawnOptions& options);

// A fresh empty directory under the system temp dir.
std::string make_temp_dir(const std::string& prefix);

}  // namespace ddp3d::test
