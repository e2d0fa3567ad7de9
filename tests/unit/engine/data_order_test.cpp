// The training data order at a constant global batch: at the batch world size it is
// DistributedSampler's order in batches of batch_size; below it, every iteration still trains
// the same samples (spread over fewer ranks, in micro-batches of at most batch_size).
#include "worker/engine/data_order.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "worker/dist/dist_env.h"
#include "worker/engine/run_context.h"

namespace ddp3d::engine {
namespace {

using Iterations = std::vector<std::vector<std::vector<std::int64_t>>>;

TrainDataOrder order_of(std::int64_t dataset_size, std::int64_t batch_size, int batch_world_size,
                        bool drop_last, bool shuffle = true) {
  TrainDataOrder order;
  order.dataset_size = dataset_size;
  order.batch_size = batch_size;
  order.batch_world_size = batch_world_size;
  order.shuffle = shuffle;
  order.seed = 7;
  order.drop_last = drop_last;
  return order;
}

// The samples all ranks of `world_size` train in each iteration of `epoch`, sorted.
std::vector<std::vector<std::int64_t>> global_batches(const TrainDataOrder& order,
                                                      std::int64_t epoch, int world_size) {
  std::vector<std::vector<std::int64_t>> out(static_cast<std::size_t>(order.iters_per_epoch()));
  for (int rank = 0; rank < world_size; ++rank) {
    const Iterations iters = epoch_micro_batches(order, epoch, rank, world_size);
    EXPECT_EQ(iters.size(), out.size()) << "rank " << rank << " of " << world_size;
    for (std::size_t i = 0; i < iters.size() && i < out.size(); ++i)
      for (const auto& micro : iters[i]) out[i].insert(out[i].end(), micro.begin(), micro.end());
  }
  for (auto& batch : out) std::sort(batch.begin(), batch.end());
  return out;
}

TEST(DataOrderTest, AtTheBatchWorldSizeItIsTheSamplersOrderInBatches) {
  for (const std::int64_t n : {1, 7, 64, 100, 1024}) {
    for (const int ws : {1, 2, 3}) {
      for (const bool drop_last : {false, true}) {
        for (const bool shuffle : {false, true}) {
          const TrainDataOrder order = order_of(n, 16, ws, drop_last, shuffle);
          if (drop_last && n < ws * 16) continue;  // no full batch: an error (below)
          for (int rank = 0; rank < ws; ++rank) {
            RunContext ctx;
            ctx.rank = rank;
            ctx.world_size = ws;
            const std::vector<std::int64_t> sampler =
                epoch_indices(n, ctx, shuffle, order.seed, 3, drop_last);
            std::vector<std::int64_t> expected_flat;
            std::vector<std::vector<std::int64_t>> expected;
            for (std::size_t first = 0; first < sampler.size(); first += 16) {
              const std::size_t last = std::min(sampler.size(), first + 16);
              if (drop_last && last - first < 16) break;
              expected.emplace_back(sampler.begin() + static_cast<std::ptrdiff_t>(first),
                                    sampler.begin() + static_cast<std::ptrdiff_t>(last));
            }
            const Iterations iters = epoch_micro_batches(order, 3, rank, ws);
            ASSERT_EQ(iters.size(), expected.size()) << n << " samples, rank " << rank;
            for (std::size_t i = 0; i < iters.size(); ++i) {
              ASSERT_EQ(iters[i].size(), 1U) << "one batch per iteration at full size";
              EXPECT_EQ(iters[i][0], expected[i])
                  << n << " samples, rank " << rank << ", iter " << i;
            }
            EXPECT_EQ(order.iters_per_epoch(), train_iters_per_epoch(n, ctx, 16, drop_last));
          }
        }
      }
    }
  }
}

TEST(DataOrderTest, FewerRanksTrainTheSameSamplesEveryIterationInMicroBatches) {
  for (const std::int64_t n : {5, 100, 1024, 1031}) {
    for (const bool drop_last : {false, true}) {
      const TrainDataOrder order = order_of(n, 4, 3, drop_last);
      if (drop_last && n < 12) continue;
      const auto full = global_batches(order, 2, 3);
      for (const int ws : {1, 2}) {
        EXPECT_EQ(global_batches(order, 2, ws), full) << n << " samples at world size " << ws;
        // Every micro-batch within batch_size; ranks run the same number of them per iteration.
        std::vector<Iterations> ranks;
        for (int rank = 0; rank < ws; ++rank)
          ranks.push_back(epoch_micro_batches(order, 2, rank, ws));
        for (std::size_t i = 0; i < ranks[0].size(); ++i) {
          for (int rank = 0; rank < ws; ++rank) {
            const auto& micro = ranks[static_cast<std::size_t>(rank)][i];
            EXPECT_EQ(micro.size(), ranks[0][i].size()) << "iteration " << i;
            for (const auto& m : micro) {
              EXPECT_GE(m.size(), 1U);
              EXPECT_LE(m.size(), 4U);
            }
          }
        }
      }
    }
  }
}

TEST(DataOrderTest, AResumeInsideAnEpochAtAnotherWorldSizeContinuesWhereTheEpochStopped) {
  const TrainDataOrder order = order_of(1024, 16, 3, false);
  const std::int64_t iters = order.iters_per_epoch();
  ASSERT_EQ(iters, 22);  // 1026 padded samples in global batches of 48
  for (int rank = 0; rank < 2; ++rank) {
    const Iterations all = epoch_micro_batches(order, 1, rank, 2);
    const Iterations tail = epoch_micro_batches(order, 1, rank, 2, 9);
    ASSERT_EQ(tail.size(), all.size() - 9);
    for (std::size_t k = 0; k < tail.size(); ++k) EXPECT_EQ(tail[k], all[k + 9]);
  }
  // 48 samples over 2 ranks: 24 each, in 2 micro-batches of 12 (never above batch_size 16).
  const Iterations r0 = epoch_micro_batches(order, 1, 0, 2);
  ASSERT_EQ(r0[0].size(), 2U);
  EXPECT_EQ(r0[0][0].size(), 12U);
  EXPECT_EQ(r0[0][1].size(), 12U);
  // The last iteration holds 1026 - 21 * 48 = 18 samples: 9 per rank, one micro-batch.
  ASSERT_EQ(r0.back().size(), 1U);
  EXPECT_EQ(r0.back()[0].size(), 9U);
}

TEST(DataOrderTest, MicroBatchSizesAreAsFewAsTheLargestShareNeedsAndNearEqual) {
  EXPECT_EQ(micro_batch_sizes(16, 48, 3, 16), (std::vector<std::int64_t>{16}));
  EXPECT_EQ(micro_batch_sizes(24, 48, 2, 16), (std::vector<std::int64_t>{12, 12}));
  EXPECT_EQ(micro_batch_sizes(48, 48, 1, 16), (std::vector<std::int64_t>{16, 16, 16}));
  // 5 samples over 2 ranks at batch_size 2: shares 3 and 2, both in 2 micro-batches.
  EXPECT_EQ(micro_batch_sizes(3, 5, 2, 2), (std::vector<std::int64_t>{2, 1}));
  EXPECT_EQ(micro_batch_sizes(2, 5, 2, 2), (std::vector<std::int64_t>{1, 1}));
  EXPECT_TRUE(micro_batch_sizes(0, 5, 2, 2).empty());
}

TEST(DataOrderTest, ItersPerEpochDependOnTheGlobalBatchNotTheWorldSize) {
  RunContext ctx;
  ctx.world_size = 2;
  ctx.batch_world_size = 3;
  EXPECT_EQ(train_iters_per_epoch(1024, ctx, 16, false), 22);
  ctx.world_size = 3;
  EXPECT_EQ(train_iters_per_epoch(1024, ctx, 16, false), 22);
  ctx.world_size = 1;
  EXPECT_EQ(train_iters_per_epoch(1024, ctx, 16, true), 21);
  ctx.batch_world_size = 0;  // unset: the world size
  EXPECT_EQ(batch_world_size(ctx), 1);
  EXPECT_EQ(train_iters_per_epoch(1024, ctx, 16, false), 64);
}

TEST(DataOrderTest, AWorldLargerThanTheBatchWorldIsAnErrorNamingTheVariable) {
  RunContext ctx;
  ctx.world_size = 4;
  ctx.batch_world_size = 3;
  try {
    (void)batch_world_size(ctx);
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("DDP3D_BATCH_WORLD_SIZE"), std::string::npos) << e.what();
  }
  EXPECT_THROW(epoch_micro_batches(order_of(100, 4, 3, false), 0, 0, 4), std::invalid_argument);
  EXPECT_THROW(iteration_positions(order_of(100, 4, 3, false), 0, 2, 2), std::invalid_argument);
  EXPECT_THROW(iteration_positions(order_of(100, 4, 3, false), 9, 0, 2), std::invalid_argument);
  try {
    (void)order_of(10, 4, 3, true).iters_per_epoch();
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("train_dataloader"), std::string::npos) << e.what();
  }
}

TEST(DataOrderTest, TheBatchWorldSizeComesFromTheEnvironmentAndNeverBelowTheWorld) {
  ::unsetenv("DDP3D_BATCH_WORLD_SIZE");
  EXPECT_EQ(dist::batch_world_size_from_environment(2), 2);
  ::setenv("DDP3D_BATCH_WORLD_SIZE", "3", 1);
  EXPECT_EQ(dist::batch_world_size_from_environment(2), 3);
  for (const char* bad : {"1", "0", "x", "-3"}) {
    ::setenv("DDP3D_BATCH_WORLD_SIZE", bad, 1);
    try {
      (void)dist::batch_world_size_from_environment(2);
      FAIL() << "no error for " << bad;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("DDP3D_BATCH_WORLD_SIZE"), std::string::npos)
          << e.what();
    }
  }
  ::unsetenv("DDP3D_BATCH_WORLD_SIZE");
}

TEST(DataOrderTest, ASamplesAugmentationSeedIsTheSameOnEveryRankTheEpochRngIsNot) {
  EXPECT_EQ(data_seed(7, 0, 2, 15), data_seed(7, 2, 2, 15));
  EXPECT_NE(data_seed(7, 0, 2, 15), data_seed(7, 0, 3, 15));
  EXPECT_NE(data_seed(7, 0, 2, 15), data_seed(7, 0, 2, 16));
  EXPECT_NE(data_seed(7, 0, 2, -1), data_seed(7, 1, 2, -1));
}

}  // namespace
}  // namespace ddp3d::engine
