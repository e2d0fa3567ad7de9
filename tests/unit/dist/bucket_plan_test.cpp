#include "worker/dist/bucket_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

namespace ddp3d::dist {
namespace {

using Plan = std::vector<std::vector<std::size_t>>;

std::vector<BucketPlanInput> uniform(std::size_t n, std::int64_t bytes) {
  return std::vector<BucketPlanInput>(n, BucketPlanInput{bytes, 0});
}

TEST(BucketPlan, ReverseOrderWithSmallFirstBucket) {
  // 6 params of 400 B; first cap 500 B closes after 2, cap 1000 B closes after 3.
  const Plan plan = plan_buckets(uniform(6, 400), 500, 1000);
  EXPECT_EQ(plan, (Plan{{5, 4}, {3, 2, 1}, {0}}));
}

TEST(BucketPlan, OversizedParameterGetsItsOwnBucket) {
  std::vector<BucketPlanInput> in{{10, 0}, {5000, 0}, {10, 0}};
  const Plan plan = plan_buckets(in, 100, 100);
  EXPECT_EQ(plan, (Plan{{2, 1}, {0}}));
}

TEST(BucketPlan, GroupsNeverMix) {
  // Alternating dtypes: each group fills its own buckets; launch order follows the walk.
  std::vector<BucketPlanInput> in{{100, 0}, {100, 1}, {100, 0}, {100, 1}};
  const Plan plan = plan_buckets(in, 150, 150);
  EXPECT_EQ(plan, (Plan{{3, 1}, {2, 0}}));
  const Plan small = plan_buckets(in, 50, 50);
  EXPECT_EQ(small, (Plan{{3}, {2}, {1}, {0}}));
}

TEST(BucketPlan, EveryParameterExactlyOnce) {
  std::vector<BucketPlanInput> in;
  for (int i = 0; i < 97; ++i) in.push_back({(i * 37) % 1000 + 1, i % 3});
  const Plan plan = plan_buckets(in, 700, 2500);
  std::vector<int> seen(in.size(), 0);
  for (const auto& b : plan) {
    ASSERT_FALSE(b.empty());
    for (auto i : b) {
      ++seen[i];
      EXPECT_EQ(in[i].group_key, in[b.front()].group_key);
    }
    EXPECT_TRUE(std::is_sorted(b.rbegin(), b.rend()));
  }
  for (auto c : seen) EXPECT_EQ(c, 1);
  for (std::size_t k = 1; k < plan.size(); ++k) EXPECT_GT(plan[k - 1].front(), plan[k].front());
}

TEST(BucketPlan, RejectsNonPositiveCaps) {
  EXPECT_THROW(plan_buckets(uniform(2, 4), 0, 10), std::invalid_argument);
  EXPECT_THROW(plan_buckets(uniform(2, 4), 10, -1), std::invalid_argument);
}

}  // namespace
}  // namespace ddp3d::dist
