#include "operator/kube/rate_limiter.h"

#include <gtest/gtest.h>

namespace ddp3d::kube {
namespace {

using namespace std::chrono_literals;
using std::chrono::duration_cast;
using std::chrono::milliseconds;

TEST(ItemExponentialRateLimiter, DoublesPerFailureUpToTheCap) {
  ItemExponentialRateLimiter l(1s, 8s);
  EXPECT_EQ(l.when("a"), 1s);
  EXPECT_EQ(l.when("a"), 2s);
  EXPECT_EQ(l.when("a"), 4s);
  EXPECT_EQ(l.when("a"), 8s);
  EXPECT_EQ(l.when("a"), 8s);
  EXPECT_EQ(l.num_requeues("a"), 5);
  EXPECT_EQ(l.when("b"), 1s) << "failures are counted per item";
  l.forget("a");
  EXPECT_EQ(l.num_requeues("a"), 0);
  EXPECT_EQ(l.when("a"), 1s);
}

TEST(ItemExponentialRateLimiter, ManyFailuresDoNotOverflow) {
  ItemExponentialRateLimiter l(5ms, 1000s);
  RateLimiter::duration d{};
  for (int i = 0; i < 200; ++i) d = l.when("a");
  EXPECT_EQ(d, 1000s);
}

TEST(BucketRateLimiter, AllowsBurstThenSpacesByQps) {
  auto clock = std::make_shared<FakeClock>();
  BucketRateLimiter l(clock, 2.0, 3);  // 2 per second, burst 3
  EXPECT_EQ(l.when("x"), 0s);
  EXPECT_EQ(l.when("y"), 0s);
  EXPECT_EQ(l.when("z"), 0s);
  EXPECT_EQ(duration_cast<milliseconds>(l.when("w")), 500ms);
  EXPECT_EQ(duration_cast<milliseconds>(l.when("v")), 1000ms);
  clock->advance(60s);  // refills, but never above the burst
  EXPECT_EQ(l.when("a"), 0s);
  EXPECT_EQ(l.when("b"), 0s);
  EXPECT_EQ(l.when("c"), 0s);
  EXPECT_EQ(duration_cast<milliseconds>(l.when("d")), 500ms);
}

TEST(MaxOfRateLimiter, TakesTheLongestDelay) {
  auto clock = std::make_shared<FakeClock>();
  std::vector<std::unique_ptr<RateLimiter>> parts;
  parts.push_back(std::make_unique<ItemExponentialRateLimiter>(10ms, 1s));
  parts.push_back(std::make_unique<BucketRateLimiter>(clock, 1.0, 1));
  MaxOfRateLimiter l(std::move(parts));
  EXPECT_EQ(duration_cast<milliseconds>(l.when("a")), 10ms);    // bucket has a token
  EXPECT_EQ(duration_cast<milliseconds>(l.when("a")), 1000ms);  // bucket empty: 1 s
  EXPECT_EQ(l.num_requeues("a"), 2);
  l.forget("a");
  EXPECT_EQ(l.num_requeues("a"), 0);
}

TEST(DefaultControllerRateLimiter, StartsAtFiveMilliseconds) {
  auto l = default_controller_rate_limiter(std::make_shared<FakeClock>());
  EXPECT_EQ(duration_cast<milliseconds>(l->when("a")), 5ms);
  EXPECT_EQ(duration_cast<milliseconds>(l->when("a")), 10ms);
}

}  // namespace
}  // namespace ddp3d::kube
