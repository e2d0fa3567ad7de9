// The leader's renew timing on a fake clock: renewals every retry period, retries that never
// run past the renew deadline, and giving up exactly when the deadline passes.
#include "operator/kube/renew_schedule.h"

#include <gtest/gtest.h>

#include "operator/kube/clock.h"

namespace ddp3d::kube {
namespace {

using namespace std::chrono_literals;

TEST(RenewSchedule, RenewsEveryRetryPeriodWhileRenewalsSucceed) {
  FakeClock clock;
  const auto t0 = clock.now();
  RenewSchedule s(clock, 10s, 2s, t0);
  EXPECT_EQ(s.give_up_at(), t0 + 10s);
  EXPECT_EQ(s.next_attempt(), t0 + 2s);
  for (int i = 1; i <= 20; ++i) {  // far longer than the deadline, always renewed
    clock.advance(2s);
    EXPECT_FALSE(s.expired()) << i;
    s.renewed(clock.now());
    EXPECT_EQ(s.give_up_at(), clock.now() + 10s);
  }
}

TEST(RenewSchedule, FailedRenewalsGiveUpAtTheDeadlineNotLater) {
  FakeClock clock;
  const auto t0 = clock.now();
  RenewSchedule s(clock, 10s, 3s, t0);
  // Retries at 3, 6, 9 s fail; the next one would be at 12 s, but 10 s is the last moment.
  for (auto at : {3s, 6s, 9s}) {
    clock.advance(s.next_attempt() - clock.now());
    EXPECT_EQ(clock.now(), t0 + at);
    EXPECT_FALSE(s.expired());
  }
  EXPECT_EQ(s.next_attempt(), t0 + 10s);
  clock.advance(1s);
  EXPECT_TRUE(s.expired());
}

TEST(RenewSchedule, ARenewalCountsFromWhenItStartedNotWhenItEnded) {
  FakeClock clock;
  const auto t0 = clock.now();
  RenewSchedule s(clock, 10s, 2s, t0);
  clock.advance(2s);
  const auto start = clock.now();
  clock.advance(7s);  // a slow but successful renewal
  s.renewed(start);
  EXPECT_EQ(s.give_up_at(), t0 + 12s) << "10 s from its start, not from its end";
  clock.advance(3s);
  EXPECT_TRUE(s.expired());
  s.renewed(t0);  // an older success never moves the deadline back
  EXPECT_EQ(s.give_up_at(), t0 + 12s);
}

}  // namespace
}  // namespace ddp3d::kube
