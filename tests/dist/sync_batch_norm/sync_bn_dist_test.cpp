// SyncBatchNorm across real processes (sync_bn_probe ranks over Gloo on loopback), each run
// under a hard timeout so a collective that one rank skips fails the test instead of hanging.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "float_files.h"
#include "rank_spawner.h"

namespace ddp3d::test {
namespace {

using ddp3d::test::max_abs_diff;
using ddp3d::test::read_floats;

const std::string kProbe = DDP3D_SYNC_BN_PROBE;

struct Run {
  std::string dir;
  SpawnResult result;
  std::string out(int rank, const std::string& suffix) const {
    return dir + "/out.rank" + std::to_string(rank) + suffix;
  }
};

Run run(int world, std::vector<std::string> args, int timeout_s = 40) {
  Run r;
  r.dir = make_temp_dir("ddp3d-syncbn-test-");
  std::vector<std::string> argv{kProbe, args.at(0), r.dir + "/out"};
  argv.insert(argv.end(), args.begin() + 1, args.end());
  SpawnOptions o;
  o.world_size = world;
  o.timeout = std::chrono::seconds(timeout_s);
  o.work_dir = r.dir;
  r.result = spawn_ranks(argv, o);
  return r;
}

// "DIFF <what> <value>" lines of one rank's output.
std::map<std::string, double> diffs(const std::string& output) {
  std::map<std::string, double> d;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) {
    std::istringstream l(line);
    std::string tag, what;
    double value = 0;
    if (l >> tag >> what >> value && tag == "DIFF") d[what] = value;
  }
  return d;
}

// Every rank's slice of a global batch through SyncBatchNorm equals plain BatchNorm on the
// whole batch in one process: outputs, running statistics, and the input, weight and bias
// gradients. The input gradient is also checked to be sensitive: with the statistics
// all-reduced in forward only it would be off by far more than the tolerance.
void expect_layer_matches(const std::string& shape, const std::vector<int>& split) {
  std::string split_arg;
  int total = 0;
  for (int n : split) {
    split_arg += (split_arg.empty() ? "" : ",") + std::to_string(n);
    total += n;
  }
  const int world = static_cast<int>(split.size());
  const Run r = run(world, {"layer", "--shape", shape, "--split", split_arg});
  ASSERT_TRUE(r.result.all_succeeded()) << r.result.describe();
  for (int rank = 0; rank < world; ++rank) {
    const auto d = diffs(r.result.ranks[static_cast<size_t>(rank)].output);
    std::cout << "world " << world << " shape " << shape << " split " << split_arg << " rank "
              << rank << ":";
    for (const auto& [what, value] : d) std::cout << " " << what << " " << value;
    std::cout << "\n";
    for (const char* what :
         {"out", "grad_input", "grad_weight", "grad_bias", "running_mean", "running_var"}) {
      ASSERT_TRUE(d.count(what)) << "rank " << rank << " did not report " << what << "\n"
                                 << r.result.describe();
      EXPECT_LT(d.at(what), 1e-5) << what << " on rank " << rank;
    }
    ASSERT_TRUE(d.count("forward_only_grad_input"));
    // (A rank holding none or all of the batch has nothing to learn from the others.)
    const int n = split[static_cast<size_t>(rank)];
    if (n > 0 && n < total) {
      EXPECT_GT(d.at("forward_only_grad_input"), 1e-3)
          << "rank " << rank << ": the input-gradient check would not catch a backward "
          << "without its all-reduce";
    }
  }
}

TEST(SyncBatchNormDist, TwoRanksMatchOneProcessOnTheWholeBatch2d) {
  expect_layer_matches("8,4,5,3", {4, 4});
}

TEST(SyncBatchNormDist, ThreeRanksUnevenSlicesMatchOneProcess1d) {
  // [N, C] as PillarFeatureNet feeds it (points × channels) and [N, C, L].
  expect_layer_matches("40,6", {28, 1, 11});  // one row: one value per channel
  expect_layer_matches("7,3,4", {3, 2, 2});
}

TEST(SyncBatchNormDist, RankWithEmptySliceTakesPartAndNothingHangs) {
  // Rank 1 has no samples: it still joins both collectives (count 0), gets an empty output and
  // an empty input gradient, and the others match one process on the whole batch.
  expect_layer_matches("10,5", {6, 0, 4});
  expect_layer_matches("6,3,2,2", {0, 6});
}

// Training a conv net with two SyncBatchNorm layers under DDP at world size W on per-rank
// batch b ends with the same parameters and running statistics as one process with plain
// BatchNorm on batch W*b; with plain BatchNorm under DDP it does not.
void expect_training_matches(int world) {
  const int batch = 3;
  const std::string steps = "4";
  const Run single = run(1, {"train", "--steps", steps, "--batch", std::to_string(world * batch)});
  ASSERT_TRUE(single.result.all_succeeded()) << single.result.describe();
  const Run sync = run(world, {"train", "--steps", steps, "--batch", std::to_string(batch)});
  ASSERT_TRUE(sync.result.all_succeeded()) << sync.result.describe();
  const Run plain =
      run(world, {"train", "--steps", steps, "--batch", std::to_string(batch), "--plain-bn"});
  ASSERT_TRUE(plain.result.all_succeeded()) << plain.result.describe();
  const auto ref = read_floats(single.out(0, ".final.bin"));
  ASSERT_FALSE(ref.empty());
  for (int rank = 0; rank < world; ++rank) {
    const double d_sync = max_abs_diff(read_floats(sync.out(rank, ".final.bin")), ref);
    const double d_plain = max_abs_diff(read_floats(plain.out(rank, ".final.bin")), ref);
    std::cout << "world " << world << " rank " << rank
              << ": max |DDP+SyncBN - one process| = " << d_sync
              << ", max |DDP+BN - one process| = " << d_plain << "\n";
    EXPECT_LT(d_sync, 1e-5) << "rank " << rank;
    EXPECT_GT(d_plain, 1e-3) << "rank " << rank << ": per-rank BN should differ here";
  }
}

TEST(SyncBatchNormDist, DdpTrainingAtWorld2MatchesOneProcessOnTheWholeBatch) {
  expect_training_matches(2);
}

TEST(SyncBatchNormDist, DdpTrainingAtWorld3MatchesOneProcessOnTheWholeBatch) {
  expect_training_matches(3);
}

}  // namespace
}  // namespace ddp3d::test
