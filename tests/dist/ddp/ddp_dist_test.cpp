// Multi-process DDP tests: real ranks (ddp_probe) over Gloo on loopback, each with a hard
// timeout so a broken collective fails the test instead of hanging it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "float_files.h"
#include "rank_spawner.h"

namespace ddp3d::test {
namespace {

using ddp3d::test::max_abs_diff;
using ddp3d::test::read_floats;

const std::string kProbe = DDP3D_DDP_PROBE;

std::string read_text(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

struct Run {
  std::string dir;
  SpawnResult result;
  std::string out(int rank, const std::string& suffix) const {
    return dir + "/out.rank" + std::to_string(rank) + suffix;
  }
};

Run run(int world, std::vector<std::string> args, int timeout_s = 60, int local_world = 0) {
  Run r;
  r.dir = make_temp_dir("ddp3d-ddp-test-");
  std::vector<std::string> argv{kProbe, args.at(0), r.dir + "/out"};
  argv.insert(argv.end(), args.begin() + 1, args.end());
  SpawnOptions o;
  o.world_size = world;
  o.local_world_size = local_world;
  o.timeout = std::chrono::seconds(timeout_s);
  o.work_dir = r.dir;
  r.result = spawn_ranks(argv, o);
  return r;
}

TEST(GlooAllreduce, ExactSumOnEveryRankOf3) {
  const auto r = run(3, {"allreduce"});
  ASSERT_TRUE(r.result.all_succeeded()) << r.result.describe();
  for (int rank = 0; rank < 3; ++rank) {
    std::ifstream f(r.out(rank, ".bin"), std::ios::binary);
    std::vector<float> v = read_floats(r.out(rank, ".bin"));
    ASSERT_EQ(v.size(), 1000u);
    for (int i = 0; i < 1000; ++i) {
      // sum over ranks of i*(rank+1) + 0.25 = 6i + 0.75, exact in binary floating point.
      ASSERT_EQ(v[static_cast<std::size_t>(i)], 6.0f * static_cast<float>(i) + 0.75f)
          << "rank " << rank << " element " << i;
    }
  }
}

// DDP at world size W, per-rank batch b, equals one process on batch W*b (same data order).
// Gradients go through the shared-memory all-reduce unless `extra` has --transport gloo;
// the test checks which one the group really used.
// local_world > 0 simulates nodes of that many ranks (the hierarchical all-reduce).
void expect_equivalent(int world, int batch, int accum, std::vector<std::string> extra = {},
                       int local_world = 0) {
  const bool gloo = std::find(extra.begin(), extra.end(), "gloo") != extra.end();
  const int nodes = local_world > 0 ? world / local_world : 1;
  const std::string transport =
      gloo ? "gloo" : (nodes > 1 ? "shm nodes=" + std::to_string(nodes) : "shm");
  const std::string steps = "5";
  const auto single = run(
      1, {"train", "--no-ddp", "--steps", steps, "--batch", std::to_string(world * batch * accum)});
  ASSERT_TRUE(single.result.all_succeeded()) << single.result.describe();
  std::vector<std::string> args{"train",
                                "--steps",
                                steps,
                                "--batch",
                                std::to_string(batch),
                                "--accum",
                                std::to_string(accum)};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto dist = run(world, args, 60, local_world);
  ASSERT_TRUE(dist.result.all_succeeded()) << dist.result.describe();
  const auto ref = read_floats(single.out(0, ".final.bin"));
  const auto init = read_floats(single.out(0, ".init.bin"));
  ASSERT_FALSE(ref.empty());
  EXPECT_GT(max_abs_diff(ref, init), 1e-2) << "training did not move the parameters";
  EXPECT_GT(std::stoi(read_text(dist.out(0, ".buckets.txt"))), 3) << "want several buckets";
  for (int rank = 0; rank < world; ++rank) {
    // Ranks start from different random weights: rank 0's broadcast must make them equal.
    EXPECT_EQ(max_abs_diff(read_floats(dist.out(rank, ".init.bin")), init), 0.0) << "rank " << rank;
    EXPECT_EQ(read_text(dist.out(rank, ".transport.txt")), transport);
    // Over shared memory, DDP's buckets live in the segment and are reduced in place.
    EXPECT_EQ(std::stoi(read_text(dist.out(rank, ".in_place.txt"))),
              gloo ? 0 : std::stoi(steps) * std::stoi(read_text(dist.out(rank, ".buckets.txt"))));
    const double diff = max_abs_diff(read_floats(dist.out(rank, ".final.bin")), ref);
    std::cout << "world " << world << " accum " << accum << " rank " << rank
              << ": max |ddp - single| = " << diff << "\n";
    EXPECT_LT(diff, 1e-5) << "rank " << rank;
  }
}

TEST(DdpEquivalence, WorldSize2MatchesSingleProcess) {
  expect_equivalent(2, 4, 1);
}
TEST(DdpEquivalence, WorldSize3MatchesSingleProcess) {
  expect_equivalent(3, 4, 1);
}
TEST(DdpEquivalence, WorldSize2OverGlooMatchesSingleProcess) {
  expect_equivalent(2, 4, 1, {"--transport", "gloo"});
}
TEST(DdpEquivalence, WorldSize3OverGlooMatchesSingleProcess) {
  expect_equivalent(3, 4, 1, {"--transport", "gloo"});
}
// Two simulated nodes of 2 ranks: shared memory inside each, Gloo between the nodes.
TEST(DdpEquivalence, TwoNodesOfTwoRanksHierarchicalMatchesSingleProcess) {
  expect_equivalent(4, 4, 1, {}, 2);
}
// Three nodes of 2 ranks, gradients accumulated in place in the buckets.
TEST(DdpEquivalence, ThreeNodesOfTwoRanksHierarchicalMatchesSingleProcess) {
  expect_equivalent(6, 2, 2, {"--keep-grads"}, 2);
}
TEST(DdpNoSync, AccumulationOf2MicroBatchesMatchesBigBatch) {
  expect_equivalent(2, 4, 2);
}
TEST(DdpNoSync, AccumulationOverGlooMatchesBigBatch) {
  expect_equivalent(2, 4, 2, {"--transport", "gloo", "--keep-grads"});
}
// Gradients copied back into their own tensors (gradient_as_bucket_view = false) ...
TEST(DdpEquivalence, CopiedGradientsMatchSingleProcess) {
  expect_equivalent(2, 4, 2, {"--copy-grads"});
}
// ... and zero_grad(set_to_none=false): gradients stay bucket aliases and accumulate in place.
TEST(DdpEquivalence, InPlaceZeroedGradientsMatchSingleProcess) {
  expect_equivalent(3, 4, 2, {"--keep-grads"});
}

// A rank that dies does not leave its peers waiting in a shared-memory barrier until the
// timeout (30 s here): they notice its pid is gone.
TEST(ShmAllReduce, ARankThatExitsFailsItsPeersPromptlyNamingIt) {
  const auto r = run(3, {"peer_exits"});
  EXPECT_LT(r.result.seconds, 15.0) << r.result.describe();
  EXPECT_EQ(r.result.ranks[2].exit_code, 7) << r.result.describe();
  for (int rank = 0; rank < 2; ++rank) {
    const auto& rr = r.result.ranks[static_cast<std::size_t>(rank)];
    EXPECT_FALSE(rr.killed) << r.result.describe();
    EXPECT_EQ(rr.exit_code, 3) << r.result.describe();
    EXPECT_NE(rr.output.find("local rank 2 (pid"), std::string::npos) << rr.output;
    EXPECT_NE(rr.output.find("exited while local rank " + std::to_string(rank) + " waited"),
              std::string::npos)
        << rr.output;
  }
}

void expect_unused_error(const Run& r, int world, const std::string& ranks_phrase) {
  EXPECT_LT(r.result.seconds, 30.0);
  for (int rank = 0; rank < world; ++rank) {
    const auto& rr = r.result.ranks[static_cast<std::size_t>(rank)];
    EXPECT_FALSE(rr.killed) << "rank " << rank << " hung\n" << r.result.describe();
    EXPECT_EQ(rr.exit_code, 3) << r.result.describe();
    EXPECT_NE(rr.output.find("'branch.weight'"), std::string::npos) << rr.output;
    EXPECT_NE(rr.output.find("'branch.bias'"), std::string::npos) << rr.output;
    EXPECT_NE(rr.output.find(ranks_phrase), std::string::npos) << rr.output;
    EXPECT_NE(rr.output.find("find_unused_parameters=True"), std::string::npos) << rr.output;
    EXPECT_EQ(rr.output.find("'fc1.weight'"), std::string::npos) << rr.output;
  }
}

TEST(DdpUnusedParameters, WithoutDetectionFailsFastNamingTheParameter) {
  const auto r = run(2, {"unused"});
  expect_unused_error(r, 2, "no gradient on 2 of 2 ranks");
}

TEST(DdpUnusedParameters, UnusedOnOneRankOnlyFailsOnEveryRank) {
  // Rank 0 uses the branch, ranks 1 and 2 do not: nobody may be left waiting.
  const auto r = run(3, {"unused", "--divergent"});
  expect_unused_error(r, 3, "no gradient on 2 of 3 ranks");
}

TEST(DdpUnusedParameters, WithDetectionTrains) {
  const auto r = run(2, {"unused", "--find-unused"});
  ASSERT_TRUE(r.result.all_succeeded()) << r.result.describe();
  EXPECT_EQ(max_abs_diff(read_floats(r.out(0, ".final.bin")), read_floats(r.out(1, ".final.bin"))),
            0.0);
  // Unused on every rank: the gradient stays undefined, as in PyTorch.
  EXPECT_EQ(read_text(r.out(0, ".branch_grad.txt")), "undefined");
}

TEST(DdpUnusedParameters, WithDetectionUsedOnOneRankOnlyTrainsInSync) {
  const auto r = run(2, {"unused", "--find-unused", "--divergent"});
  ASSERT_TRUE(r.result.all_succeeded()) << r.result.describe();
  EXPECT_EQ(max_abs_diff(read_floats(r.out(0, ".final.bin")), read_floats(r.out(1, ".final.bin"))),
            0.0);
  EXPECT_EQ(read_text(r.out(1, ".branch_grad.txt")), "defined");
}

TEST(DdpOverlap, FirstBucketLaunchesBeforeBackwardEnds) {
  const auto r = run(2, {"overlap"});
  int finished_in_backward = 0;
  ASSERT_TRUE(r.result.all_succeeded()) << r.result.describe();
  for (int rank = 0; rank < 2; ++rank) {
    const auto report = read_text(r.out(rank, ".overlap.txt"));
    std::cout << "rank " << rank << ":\n" << report;
    std::istringstream lines(report);
    std::string line;
    int steps = 0;
    while (std::getline(lines, line)) {
      if (line.rfind("step=", 0) != 0) continue;
      ++steps;
      int step, buckets, in_backward, first;
      long lead, backward_us, wait_us;
      char done_lead[32] = {};
      ASSERT_EQ(std::sscanf(line.c_str(),
                            "step=%d buckets=%d in_backward=%d first_bucket=%d "
                            "first_launch_lead_us=%ld backward_us=%ld wait_us=%ld "
                            "first_done_lead_us=%31s",
                            &step, &buckets, &in_backward, &first, &lead, &backward_us, &wait_us,
                            done_lead),
                8)
          << line;
      // Over shared memory the completion time is known: the first bucket's all-reduce
      // finished while backward was still computing the other layers' gradients.
      ASSERT_STRNE(done_lead, "na") << line;
      if (std::atol(done_lead) > 0) ++finished_in_backward;
      EXPECT_GE(buckets, 8) << line;
      EXPECT_EQ(in_backward, buckets) << line;  // every bucket launched from a hook
      EXPECT_EQ(first, 0) << line;
      // Bucket 0 (the last layer) went out while the other 7 layers were still in backward.
      EXPECT_GT(lead, 0) << line;
    }
    EXPECT_EQ(steps, 3);
    EXPECT_NE(report.find("observed=" + std::to_string(3 * 8)), std::string::npos) << report;
  }
  // At least one step per rank (usually all): not merely launched early, but done early. On a
  // loaded CI machine a peer may lag by a whole backward, so not every step is required.
  EXPECT_GE(finished_in_backward, 2);
}

TEST(DdpConstruction, ShapeMismatchNamesParameterAndRanks) {
  const auto r = run(2, {"mismatch"});
  for (const auto& rr : r.result.ranks) {
    EXPECT_FALSE(rr.killed) << r.result.describe();
    EXPECT_EQ(rr.exit_code, 3) << r.result.describe();
    EXPECT_NE(rr.output.find("parameter 'fc2.weight' (index 2) is [32, 32] Float on rank 0 but "
                             "[31, 32] Float on rank 1"),
              std::string::npos)
        << rr.output;
  }
}

TEST(DdpConstruction, ParametersReplacedAfterConstructionFailTheStep) {
  const auto r = run(2, {"replaced"});
  for (const auto& rr : r.result.ranks) {
    EXPECT_FALSE(rr.killed) << r.result.describe();
    EXPECT_EQ(rr.exit_code, 3) << r.result.describe();
    EXPECT_NE(rr.output.find("no gradient hook ran in this backward pass"), std::string::npos)
        << rr.output;
  }
}

TEST(DdpConstruction, ParameterCountMismatchNamesRanks) {
  const auto r = run(3, {"mismatch", "--count"});
  for (const auto& rr : r.result.ranks) {
    EXPECT_FALSE(rr.killed) << r.result.describe();
    EXPECT_EQ(rr.exit_code, 3) << r.result.describe();
    EXPECT_NE(rr.output.find("rank 0 has 6 parameters but rank 2 has 5"), std::string::npos)
        << rr.output;
  }
}

}  // namespace
}  // namespace ddp3d::test
