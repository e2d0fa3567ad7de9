#include "worker/dist/distributed_sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <stdexcept>

namespace ddp3d::dist {
namespace {

std::vector<std::vector<std::int64_t>> shards(std::int64_t n, int replicas, bool shuffle,
                                              bool drop_last, std::uint64_t seed,
                                              std::int64_t epoch) {
  std::vector<std::vector<std::int64_t>> out;
  for (int r = 0; r < replicas; ++r) {
    DistributedSampler s(n, {.num_replicas = replicas,
                             .rank = r,
                             .shuffle = shuffle,
                             .seed = seed,
                             .drop_last = drop_last});
    s.set_epoch(epoch);
    out.push_back(s.indices());
  }
  return out;
}

// The exact lists torch.utils.data.DistributedSampler (torch 2.15) gives for these settings.
TEST(DistributedSampler, MatchesPyTorch) {
  const auto s = shards(10, 3, true, false, 42, 1);
  EXPECT_EQ(s[0], (std::vector<std::int64_t>{8, 0, 6, 3}));
  EXPECT_EQ(s[1], (std::vector<std::int64_t>{4, 5, 7, 8}));
  EXPECT_EQ(s[2], (std::vector<std::int64_t>{9, 1, 2, 4}));
  DistributedSampler d(7, {.num_replicas = 3, .rank = 2, .shuffle = true, .drop_last = true});
  EXPECT_EQ(d.indices(), (std::vector<std::int64_t>{5, 6}));
}

TEST(DistributedSampler, CoverageDisjointnessAndEqualLength) {
  for (std::int64_t n : {0, 1, 2, 5, 10, 11, 64, 97}) {
    for (int replicas : {1, 2, 3, 4, 8}) {
      for (bool shuffle : {false, true}) {
        for (bool drop_last : {false, true}) {
          SCOPED_TRACE("n=" + std::to_string(n) + " replicas=" + std::to_string(replicas) +
                       " shuffle=" + std::to_string(shuffle) +
                       " drop_last=" + std::to_string(drop_last));
          const auto s = shards(n, replicas, shuffle, drop_last, 7, 3);
          const std::int64_t per = drop_last ? n / replicas : (n + replicas - 1) / replicas;
          std::multiset<std::int64_t> all;
          for (const auto& shard : s) {
            ASSERT_EQ(static_cast<std::int64_t>(shard.size()), per);
            for (auto i : shard) {
              ASSERT_GE(i, 0);
              ASSERT_LT(i, n);
              all.insert(i);
            }
          }
          const std::set<std::int64_t> distinct(all.begin(), all.end());
          if (drop_last) {
            // Disjoint, and only the tail that does not divide evenly is dropped.
            EXPECT_EQ(distinct.size(), all.size());
            EXPECT_EQ(static_cast<std::int64_t>(all.size()), per * replicas);
          } else {
            // Everything covered; the only repeats are the padding, at most replicas - 1.
            EXPECT_EQ(static_cast<std::int64_t>(distinct.size()), n);
            EXPECT_EQ(static_cast<std::int64_t>(all.size() - distinct.size()), per * replicas - n);
            EXPECT_LT(per * replicas - n, n == 0 ? 1 : replicas);
          }
        }
      }
    }
  }
}

TEST(DistributedSampler, PaddingRepeatsFromTheStart) {
  // No shuffle, 5 samples on 4 replicas: padded list 0 1 2 3 4 0 1 2.
  const auto s = shards(5, 4, false, false, 0, 0);
  EXPECT_EQ(s[0], (std::vector<std::int64_t>{0, 4}));
  EXPECT_EQ(s[1], (std::vector<std::int64_t>{1, 0}));
  EXPECT_EQ(s[3], (std::vector<std::int64_t>{3, 2}));
  // Padding longer than the data wraps more than once: 2 samples on 5 replicas.
  const auto w = shards(2, 5, false, false, 0, 0);
  EXPECT_EQ(w[4], (std::vector<std::int64_t>{0}));
}

TEST(DistributedSampler, DeterministicPerEpochAndSeed) {
  const auto a = shards(50, 2, true, false, 3, 4);
  const auto b = shards(50, 2, true, false, 3, 4);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, shards(50, 2, true, false, 3, 5));
  EXPECT_NE(a, shards(50, 2, true, false, 4, 4));
  // Same permutation on every rank: interleaving the shards rebuilds one world-size-1 order.
  const auto one = shards(50, 1, true, false, 3, 4)[0];
  for (std::size_t k = 0; k < one.size(); ++k) EXPECT_EQ(a[k % 2][k / 2], one[k]);
  // Without shuffle the epoch does not matter.
  EXPECT_EQ(shards(9, 3, false, false, 0, 0), shards(9, 3, false, false, 5, 9));
}

TEST(DistributedSampler, SetEpochChangesOrderOfOneSampler) {
  DistributedSampler s(20, {.num_replicas = 2, .rank = 1, .seed = 11});
  const auto e0 = s.indices();
  s.set_epoch(1);
  EXPECT_EQ(s.epoch(), 1);
  EXPECT_NE(s.indices(), e0);
  s.set_epoch(0);
  EXPECT_EQ(s.indices(), e0);
  EXPECT_EQ(s.num_samples(), 10);
  EXPECT_EQ(s.total_size(), 20);
}

TEST(DistributedSampler, RejectsBadArguments) {
  EXPECT_THROW(DistributedSampler(-1, {}), std::invalid_argument);
  EXPECT_THROW(DistributedSampler(4, {.num_replicas = 0}), std::invalid_argument);
  EXPECT_THROW(DistributedSampler(4, {.num_replicas = 2, .rank = 2}), std::invalid_argument);
  EXPECT_THROW(DistributedSampler(4, {.num_replicas = 2, .rank = -1}), std::invalid_argument);
}

}  // namespace
}  // namespace ddp3d::dist
