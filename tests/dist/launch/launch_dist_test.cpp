// `ddp3d launch` and process groups with real processes over Gloo on loopback.
#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>
#include <thread>

#include "tests/support/subprocess.h"

namespace ddp3d::testing {
namespace {

using namespace std::chrono_literals;

std::string ddp3d() {
  return binary_path("worker/ddp3d");
}

int count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (auto pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + 1)) {
    ++n;
  }
  return n;
}

pid_t read_pid(const std::string& path) {
  std::ifstream in(path);
  pid_t pid = -1;
  in >> pid;
  return pid;
}

TEST(Launch, AllReduceOverGlooAcrossThreeProcessesIsExact) {
  const auto port = std::to_string(free_port());
  const auto r = run({ddp3d(), "launch", "--nproc-per-node", "3", "--master-port", port, "--",
                      ddp3d(), "check-dist", "--timeout", "60"},
                     {}, 90s);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(count(r.output, "of world size 3"), 3) << r.output;
  for (const char* rank : {"exact on rank 0 ", "exact on rank 1 ", "exact on rank 2 "}) {
    EXPECT_NE(r.output.find(rank), std::string::npos) << rank << "\n" << r.output;
  }
  // Three ranks on one node: the shared-memory gradient all-reduce is set up and exact too.
  EXPECT_EQ(count(r.output, "shared-memory all-reduce of 65536 doubles is exact on rank"), 3)
      << r.output;
  EXPECT_EQ(count(r.output, "gradient all-reduce through shared memory (3 local ranks"), 1)
      << r.output;
}

TEST(Launch, SigkillOfOneRankStopsEveryProcessAndNamesTheRank) {
  const std::string dir = make_temp_dir("ddp3d-launch-");
  // Each rank leaves a grandchild behind and rank 0 ignores SIGTERM, so both the
  // process-group kill and the SIGKILL after the grace period are exercised.
  const std::string script = "sleep 300 & echo $! > " + dir +
                             "/child$RANK.pid; "
                             "if [ \"$RANK\" = 0 ]; then trap '' TERM; fi; "
                             "echo $$ > " +
                             dir +
                             "/rank$RANK.pid; "
                             "while true; do sleep 0.1; done";
  Subprocess launcher(
      {ddp3d(), "launch", "--nproc-per-node", "3", "--grace-period", "3", "--", "sh", "-c", script},
      {});
  std::vector<pid_t> pids(3, -1), children(3, -1);
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  for (int r = 0; r < 3; ++r) {
    while ((pids[r] = read_pid(dir + "/rank" + std::to_string(r) + ".pid")) <= 0 ||
           (children[r] = read_pid(dir + "/child" + std::to_string(r) + ".pid")) <= 0) {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << launcher.output_so_far();
      std::this_thread::sleep_for(50ms);
    }
  }
  const auto killed_at = std::chrono::steady_clock::now();
  ASSERT_EQ(kill(pids[1], SIGKILL), 0);
  const auto result = launcher.wait(60s);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - killed_at).count();
  EXPECT_FALSE(result.timed_out) << result.output;
  EXPECT_NE(result.exit_code, 0);
  EXPECT_EQ(result.exit_code, 128 + SIGKILL) << "exits with the failed rank's code";
  EXPECT_LT(seconds, 30.0);
  EXPECT_NE(result.output.find("rank 1 (local rank 1)"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("SIGKILL"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("grace period over"), std::string::npos) << result.output;
  for (int r = 0; r < 3; ++r) {
    EXPECT_FALSE(process_alive(pids[r])) << "rank " << r << " still running";
    EXPECT_FALSE(process_alive(children[r])) << "rank " << r << "'s child still running";
  }
}

TEST(Launch, UnreachableMasterFailsWithinTheTimeoutNamingIt) {
  const auto port = std::to_string(free_port());  // nobody listens there
  const auto r =
      run({ddp3d(), "check-dist", "--timeout", "3"},
          {{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", port}},
          60s);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  // The timeout plus process start-up (loading LibTorch) and c10d's last connect attempt.
  EXPECT_LT(r.elapsed.count(), 3.0 + 8.0);
  EXPECT_NE(r.output.find("MASTER_ADDR:MASTER_PORT=127.0.0.1:" + port), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("did not complete within 3 s"), std::string::npos) << r.output;
}

// The seed's multi-node form on one machine: one launcher per "node", same MASTER_ADDR/PORT.
void expect_two_nodes_form_one_world(const std::string& gpus, int world_size) {
  const auto port = std::to_string(free_port());
  std::vector<std::unique_ptr<Subprocess>> nodes;
  for (const char* node_rank : {"0", "1"}) {
    nodes.push_back(std::make_unique<Subprocess>(
        std::vector<std::string>{ddp3d(), "launch", "--", ddp3d(), "check-dist", "--timeout", "60"},
        std::map<std::string, std::string>{{"NNODES", "2"},
                                           {"NODE_RANK", node_rank},
                                           {"MASTER_ADDR", "127.0.0.1"},
                                           {"PORT", port},
                                           {"GPUS", gpus}}));
  }
  for (auto& node : nodes) {
    const auto r = node->wait(90s);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(count(r.output, "of world size " + std::to_string(world_size) + " "),
              std::max(std::stoi(gpus), 1))
        << r.output;
  }
}

TEST(Launch, TwoNodesWithOneProcessEachFormAWorldOfTwo) {
  expect_two_nodes_form_one_world("1", 2);
}

TEST(Launch, TwoNodesWithTwoProcessesEachFormAWorldOfFour) {
  expect_two_nodes_form_one_world("2", 4);
}

// The seed's multi-node form through tools/dist_train.sh and `ddp3d train`: two "nodes" on one
// machine, `GPUS` processes each (CPU processes here), train the toy config as one world.
void expect_dist_train_sh_forms_one_world(const std::string& gpus, int world_size) {
  const auto port = std::to_string(free_port());
  const std::string work_dir = make_temp_dir("ddp3d-dist-train-");
  std::vector<std::unique_ptr<Subprocess>> nodes;
  for (const char* node_rank : {"0", "1"}) {
    nodes.push_back(std::make_unique<Subprocess>(
        std::vector<std::string>{"bash", source_path("tools/dist_train.sh"),
                                 source_path("configs/toy/toy_regression_2proc.yaml"), gpus,
                                 "--work-dir", work_dir},
        std::map<std::string, std::string>{{"NNODES", "2"},
                                           {"NODE_RANK", node_rank},
                                           {"MASTER_ADDR", "127.0.0.1"},
                                           {"PORT", port},
                                           {"DDP3D_BIN", ddp3d()}}));
  }
  std::string rank0_output;
  for (auto& node : nodes) {
    const auto r = node->wait(180s);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    if (rank0_output.empty()) rank0_output = r.output;
  }
  EXPECT_NE(rank0_output.find("world size " + std::to_string(world_size) + ","), std::string::npos)
      << rank0_output;
  EXPECT_NE(rank0_output.find("Epoch(train)"), std::string::npos) << rank0_output;
}

TEST(DistTrainSh, TwoNodesWithOneProcessEachTrainAsAWorldOfTwo) {
  expect_dist_train_sh_forms_one_world("1", 2);
}

TEST(DistTrainSh, TwoNodesWithTwoProcessesEachTrainAsAWorldOfFour) {
  expect_dist_train_sh_forms_one_world("2", 4);
}

}  // namespace
}  // namespace ddp3d::testing
