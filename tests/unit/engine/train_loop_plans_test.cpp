// The two built-in loop plans on small numbers: their limits and when they validate.
#include "worker/engine/train_loop_plans.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

namespace ddp3d::engine {
namespace {

LoopProgress limits_of(const LoopPlan& plan, std::int64_t iters_per_epoch) {
  LoopProgress p;
  p.iters_per_epoch = iters_per_epoch;
  plan.set_limits(p);
  return p;
}

TEST(TrainLoopPlans, AnEpochLoopTrainsItsEpochsAndValidatesByItsRule) {
  const EpochBasedTrainLoop plan(5, ValidationRule{.interval = 2, .begin = 3});
  LoopProgress p = limits_of(plan, 4);
  EXPECT_TRUE(p.by_epoch());
  EXPECT_EQ(p.max_epochs, 5);
  EXPECT_EQ(p.max_iters(), 20);
  std::vector<std::int64_t> validated;
  for (std::int64_t e = 1; e <= 5; ++e) {
    p.epochs_completed = e;
    p.global_iter = e * 4;
    if (plan.validate_after_epoch(p)) validated.push_back(e);
    EXPECT_FALSE(plan.validate_after_iter(p)) << e;
  }
  // Epoch 2 is a multiple of 2 but before val_begin; 5 is the last.
  EXPECT_EQ(validated, (std::vector<std::int64_t>{4, 5}));
}

TEST(TrainLoopPlans, AnIterationLoopPassesOverTheDataAsOftenAsItsIterationsNeed) {
  const IterBasedTrainLoop plan(7, ValidationRule{.interval = 3, .begin = 1});
  LoopProgress p = limits_of(plan, 3);
  EXPECT_FALSE(p.by_epoch());
  EXPECT_EQ(p.max_epochs, 3);  // 3 + 3 + 1 iterations
  EXPECT_EQ(p.max_iters(), 7);
  std::vector<std::int64_t> validated;
  for (std::int64_t i = 1; i <= 7; ++i) {
    p.global_iter = i;
    p.epochs_completed = i / 3;
    if (plan.validate_after_iter(p)) validated.push_back(i);
    EXPECT_FALSE(plan.validate_after_epoch(p)) << i;
  }
  EXPECT_EQ(validated, (std::vector<std::int64_t>{3, 6, 7}));
  // An exact number of passes needs no extra one.
  EXPECT_EQ(limits_of(IterBasedTrainLoop(6, {}), 3).max_epochs, 2);
}

TEST(TrainLoopPlans, TheLargestIterationCountDoesNotOverflowThePassCount) {
  const std::int64_t most = std::numeric_limits<std::int64_t>::max();
  const LoopProgress p = limits_of(IterBasedTrainLoop(most, {}), 2);
  EXPECT_EQ(p.max_epochs, most / 2 + 1);
  EXPECT_EQ(p.max_iters(), most);
}

TEST(TrainLoopPlans, LimitsThatCannotRunAreRefused) {
  // No iterations would read as an epoch-based loop (LoopProgress::by_epoch).
  EXPECT_THROW(limits_of(IterBasedTrainLoop(0, {}), 3), std::invalid_argument);
  EXPECT_THROW(limits_of(EpochBasedTrainLoop(-1, {}), 3), std::invalid_argument);
  EXPECT_THROW(limits_of(EpochBasedTrainLoop(2, {}), 0), std::invalid_argument);
  EXPECT_EQ(limits_of(EpochBasedTrainLoop(0, {}), 3).max_iters(), 0);
}

}  // namespace
}  // namespace ddp3d::engine
