// client-go workqueue semantics: de-duplication, no concurrent processing of one key,
// re-queue-once after done(), delayed and rate-limited adds (on a fake clock), shutdown.
#include "operator/kube/work_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <map>
#include <set>
#include <thread>

namespace ddp3d::kube {
namespace {

using namespace std::chrono_literals;

struct FakeQueue {
  std::shared_ptr<FakeClock> clock = std::make_shared<FakeClock>();
  WorkQueue q{clock, std::make_unique<ItemExponentialRateLimiter>(1s, 8s)};
  // Non-blocking take: get_for(0) promotes due delayed items and never waits.
  std::optional<std::string> take() { return q.get_for(0s); }
};

TEST(WorkQueue, DeduplicatesQueuedItemsAndKeepsFifoOrder) {
  FakeQueue f;
  f.q.add("a");
  f.q.add("b");
  f.q.add("a");
  EXPECT_EQ(f.q.len(), 2u);
  EXPECT_EQ(f.take(), "a");
  EXPECT_EQ(f.take(), "b");
  EXPECT_EQ(f.take(), std::nullopt);
}

TEST(WorkQueue, ItemAddedWhileProcessingIsRequeuedOnceAfterDone) {
  FakeQueue f;
  f.q.add("a");
  ASSERT_EQ(f.take(), "a");
  f.q.add("a");
  f.q.add("a");
  // Not handed to a second worker while the first still processes it.
  EXPECT_EQ(f.q.len(), 0u);
  EXPECT_EQ(f.take(), std::nullopt);
  EXPECT_EQ(f.q.processing_len(), 1u);
  f.q.done("a");
  EXPECT_EQ(f.q.len(), 1u);
  EXPECT_EQ(f.take(), "a");
  f.q.done("a");
  EXPECT_EQ(f.take(), std::nullopt);
  EXPECT_EQ(f.q.processing_len(), 0u);
}

TEST(WorkQueue, DoneWithoutReAddDoesNotRequeue) {
  FakeQueue f;
  f.q.add("a");
  ASSERT_EQ(f.take(), "a");
  f.q.done("a");
  EXPECT_EQ(f.q.len(), 0u);
}

TEST(WorkQueue, AddAfterWaitsForTheClock) {
  FakeQueue f;
  f.q.add_after("a", 5s);
  EXPECT_EQ(f.q.delayed_len(), 1u);
  EXPECT_EQ(f.take(), std::nullopt);
  f.clock->advance(4999ms);
  EXPECT_EQ(f.take(), std::nullopt);
  f.clock->advance(1ms);
  EXPECT_EQ(f.take(), "a");
  EXPECT_EQ(f.q.delayed_len(), 0u);
}

TEST(WorkQueue, EarlierDeadlineForTheSameItemWins) {
  FakeQueue f;
  f.q.add_after("a", 10s);
  f.q.add_after("a", 2s);
  f.q.add_after("a", 7s);
  EXPECT_EQ(f.q.delayed_len(), 1u);
  f.clock->advance(2s);
  EXPECT_EQ(f.take(), "a");
  f.q.done("a");
  f.clock->advance(10s);
  EXPECT_EQ(f.take(), std::nullopt) << "the later deadlines were merged, not kept";
}

TEST(WorkQueue, ZeroDelayAddsImmediately) {
  FakeQueue f;
  f.q.add_after("a", 0s);
  EXPECT_EQ(f.q.len(), 1u);
}

TEST(WorkQueue, DelayedItemAlreadyQueuedIsNotDuplicated) {
  FakeQueue f;
  f.q.add("a");
  f.q.add_after("a", 1s);
  f.clock->advance(1s);
  EXPECT_EQ(f.take(), "a");
  EXPECT_EQ(f.take(), std::nullopt);
}

TEST(WorkQueue, RateLimitedAddsBackOffPerItemUntilForgotten) {
  FakeQueue f;
  f.q.add_rate_limited("a");  // 1 s
  f.q.add_rate_limited("b");  // 1 s: per-item, b is not slowed by a's failures
  f.clock->advance(1s);
  EXPECT_EQ(f.take(), "a");
  EXPECT_EQ(f.take(), "b");
  f.q.done("a");
  f.q.done("b");
  EXPECT_EQ(f.q.num_requeues("a"), 1);

  f.q.add_rate_limited("a");  // second failure: 2 s
  f.clock->advance(1999ms);
  EXPECT_EQ(f.take(), std::nullopt);
  f.clock->advance(1ms);
  EXPECT_EQ(f.take(), "a");
  f.q.done("a");
  EXPECT_EQ(f.q.num_requeues("a"), 2);

  f.q.forget("a");
  EXPECT_EQ(f.q.num_requeues("a"), 0);
  f.q.add_rate_limited("a");  // back to 1 s
  f.clock->advance(1s);
  EXPECT_EQ(f.take(), "a");
}

TEST(WorkQueue, BlockedGetWakesWhenFakeTimeReachesADelayedItem) {
  FakeQueue f;
  f.q.add_after("a", 3s);
  auto got = std::async(std::launch::async, [&] { return f.q.get(); });
  ASSERT_TRUE(f.clock->wait_for_waiters(1, 5s)) << "the consumer never blocked";
  f.clock->advance(2s);
  EXPECT_EQ(got.wait_for(50ms), std::future_status::timeout);
  f.clock->advance(1s);
  ASSERT_EQ(got.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(got.get(), "a");
}

TEST(WorkQueue, BlockedGetWakesOnAddFromAnotherThread) {
  FakeQueue f;  // time never moves: only the add can wake the consumer
  auto got = std::async(std::launch::async, [&] { return f.q.get(); });
  ASSERT_TRUE(f.clock->wait_for_waiters(1, 5s)) << "the consumer never blocked";
  f.q.add("x");
  ASSERT_EQ(got.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(got.get(), "x");
}

TEST(WorkQueue, ShutDownDrainsThenReturnsNulloptAndIgnoresAdds) {
  FakeQueue f;
  f.q.add("a");
  f.q.add("b");
  f.q.add_after("c", 1s);
  f.q.shut_down();
  EXPECT_TRUE(f.q.shutting_down());
  f.q.add("d");
  EXPECT_EQ(f.q.get(), "a");
  EXPECT_EQ(f.q.get(), "b");
  EXPECT_EQ(f.q.get(), std::nullopt);
}

TEST(WorkQueue, ShutDownNowWakesBlockedConsumers) {
  FakeQueue f;
  std::vector<std::future<std::optional<std::string>>> consumers;
  for (int i = 0; i < 3; ++i)
    consumers.push_back(std::async(std::launch::async, [&] { return f.q.get(); }));
  ASSERT_TRUE(f.clock->wait_for_waiters(3, 5s)) << "the consumers never blocked";
  f.q.add("left-behind");
  f.q.shut_down_now();
  int nullopts = 0;
  for (auto& c : consumers) {
    ASSERT_EQ(c.wait_for(5s), std::future_status::ready);
    if (!c.get()) ++nullopts;
  }
  EXPECT_GE(nullopts, 2);  // at most one consumer may have taken the item before shutdown
}

TEST(WorkQueue, NoItemIsProcessedByTwoWorkersAtOnce) {
  WorkQueue q(std::make_shared<RealClock>(), std::make_unique<ItemExponentialRateLimiter>(0s, 0s));
  std::mutex mu;
  std::set<std::string> in_flight;
  std::atomic<int> overlaps{0}, processed{0};
  std::vector<std::thread> workers;
  for (int w = 0; w < 4; ++w)
    workers.emplace_back([&] {
      while (auto item = q.get()) {
        {
          std::lock_guard l(mu);
          if (!in_flight.insert(*item).second) ++overlaps;
        }
        // Hold the item for a moment, so that a second worker would have time to take it.
        for (int i = 0; i < 100; ++i) std::this_thread::yield();
        {
          std::lock_guard l(mu);
          in_flight.erase(*item);
        }
        ++processed;
        q.done(*item);
      }
    });
  for (int round = 0; round < 200; ++round)
    for (int k = 0; k < 5; ++k) q.add("key-" + std::to_string(k));
  // A draining shutdown: the workers finish every queued and re-queued item, then get()
  // returns nullopt and they end.
  q.shut_down();
  for (auto& t : workers) t.join();
  EXPECT_EQ(q.len(), 0u);
  EXPECT_EQ(q.processing_len(), 0u);
  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_GE(processed.load(), 5);
  EXPECT_LE(processed.load(), 1000);
}

}  // namespace
}  // namespace ddp3d::kube
