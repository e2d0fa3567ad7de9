// Gradient accumulation and fp16 loss-scaling policy (pure logic).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <limits>

#include "worker/engine/grad_accumulation.h"
#include "worker/engine/loss_scaler.h"

namespace ddp3d::engine {
namespace {

TEST(GradAccumulation, UpdatesEveryCountsAndAtTheEnd) {
  const GradAccumulation acc(3, 8);  // groups {0,1,2} {3,4,5} {6,7}
  std::vector<std::int64_t> updates;
  for (std::int64_t i = 0; i < 8; ++i) {
    if (acc.is_update_iter(i)) updates.push_back(i);
  }
  EXPECT_EQ(updates, (std::vector<std::int64_t>{2, 5, 7}));
  EXPECT_EQ(acc.loss_divisor(0), 3);
  EXPECT_EQ(acc.loss_divisor(5), 3);
  EXPECT_EQ(acc.loss_divisor(6), 2);  // the short last group divides by its own size
  EXPECT_EQ(acc.loss_divisor(7), 2);
}

TEST(GradAccumulation, AccumulatedGradientEqualsOneBigBatch) {
  // Sum over micro-batches of grad(loss_i / counts) == grad(mean loss over all samples).
  const at::Tensor w = at::tensor({0.5, -1.0}, at::kDouble).requires_grad_(true);
  const at::Tensor x = at::arange(12, at::kDouble).reshape({6, 2}) / 7.0;
  const GradAccumulation acc(3, 3);
  for (std::int64_t i = 0; i < 3; ++i) {
    const at::Tensor xi = x.slice(0, 2 * i, 2 * i + 2);
    (at::matmul(xi, w).pow(2).mean() / acc.loss_divisor(i)).backward();
  }
  const at::Tensor accumulated = w.grad().clone();
  w.mutable_grad().reset();
  at::matmul(x, w).pow(2).mean().backward();
  EXPECT_TRUE(at::allclose(accumulated, w.grad(), 1e-12, 1e-12));
}

TEST(GradAccumulation, RejectsZeroCounts) {
  EXPECT_THROW(GradAccumulation(0, 10), std::invalid_argument);
}

TEST(LossScaler, BacksOffOnInfAndGrowsAfterInterval) {
  DynamicLossScaler s({/*init_scale=*/1024, /*growth_factor=*/2, /*backoff_factor=*/0.5,
                       /*growth_interval=*/3});
  EXPECT_FALSE(s.update(true));  // skip the step
  EXPECT_EQ(s.scale(), 512);
  EXPECT_TRUE(s.update(false));
  EXPECT_TRUE(s.update(false));
  EXPECT_EQ(s.scale(), 512);
  EXPECT_TRUE(s.update(false));  // third clean step in a row
  EXPECT_EQ(s.scale(), 1024);
  EXPECT_EQ(s.growth_tracker(), 0);
  EXPECT_TRUE(s.update(false));
  EXPECT_FALSE(s.update(true));  // an overflow resets the streak
  EXPECT_EQ(s.scale(), 512);
  EXPECT_EQ(s.growth_tracker(), 0);
}

TEST(LossScaler, UnscalesAndDetectsNonFinite) {
  DynamicLossScaler s({8, 2, 0.5, 10});
  at::Tensor a = at::tensor({8.0, 16.0});
  at::Tensor b = at::tensor({4.0});
  EXPECT_FALSE(s.unscale_and_check({a, b, at::Tensor()}));
  EXPECT_TRUE(at::equal(a, at::tensor({1.0, 2.0})));
  EXPECT_TRUE(at::equal(b, at::tensor({0.5})));
  at::Tensor c = at::tensor({1.0, std::numeric_limits<double>::infinity()});
  EXPECT_TRUE(s.unscale_and_check({c}));
  at::Tensor d = at::tensor({std::numeric_limits<double>::quiet_NaN()});
  EXPECT_TRUE(s.unscale_and_check({d}));
}

TEST(LossScaler, RejectsBadOptions) {
  EXPECT_THROW(DynamicLossScaler({0, 2, 0.5, 1}), std::invalid_argument);
  EXPECT_THROW(DynamicLossScaler({1, 2, 1.5, 1}), std::invalid_argument);
}

}  // namespace
}  // namespace ddp3d::engine
