#include "operator/kube/backoff.h"

#include <gtest/gtest.h>

namespace ddp3d::kube {
namespace {

using namespace std::chrono_literals;

TEST(Backoff, DoublesUpToMaxWithoutJitterAndResets) {
  Backoff b({.base = 100ms, .max = 1000ms, .factor = 2.0, .jitter = 0.0});
  EXPECT_EQ(b.next(), 100ms);
  EXPECT_EQ(b.next(), 200ms);
  EXPECT_EQ(b.next(), 400ms);
  EXPECT_EQ(b.next(), 800ms);
  EXPECT_EQ(b.next(), 1000ms);
  EXPECT_EQ(b.next(), 1000ms);
  EXPECT_EQ(b.attempts(), 6);
  b.reset();
  EXPECT_EQ(b.next(), 100ms);
}

TEST(Backoff, JitterStaysWithinBoundsAndSpreadsClients) {
  Backoff::Options o{.base = 1000ms, .max = 1000ms, .factor = 2.0, .jitter = 0.2};
  Backoff a(o, 1), b(o, 2);
  bool differ = false;
  for (int i = 0; i < 50; ++i) {
    const auto x = a.next(), y = b.next();
    EXPECT_GE(x, 800ms);
    EXPECT_LE(x, 1200ms);
    if (x != y) differ = true;
  }
  EXPECT_TRUE(differ) << "two clients with different seeds must not reconnect in lockstep";
}

TEST(Backoff, ManyAttemptsDoNotOverflow) {
  Backoff b({.base = 200ms, .max = 30000ms, .factor = 2.0, .jitter = 0.0});
  for (int i = 0; i < 10000; ++i) b.next();
  EXPECT_EQ(b.next(), 30000ms);
}

}  // namespace
}  // namespace ddp3d::kube
