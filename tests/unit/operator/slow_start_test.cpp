// run_slow_start: every task once; the first alone, never more at once than one plus the
// successes before it started, growing to the width; after a failure, one at a time.
#include "operator/controller/slow_start.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace ddp3d::op::controller {
namespace {

// What each task saw when it started: how many ran (itself included) and how many had
// succeeded. Each task takes a while, like a request's round trip.
struct Recorder {
  explicit Recorder(std::size_t n) : active_at_start(n), done_at_start(n) {}
  std::mutex mu;
  std::size_t active = 0, done = 0, peak = 0;
  std::vector<std::size_t> active_at_start, done_at_start;

  void run(std::size_t i, bool fail = false) {
    {
      std::lock_guard lock(mu);
      active_at_start[i] = ++active;
      done_at_start[i] = done;
      peak = std::max(peak, active);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    std::lock_guard lock(mu);
    --active;
    if (fail) throw std::runtime_error("task " + std::to_string(i));
    ++done;
  }
};

TEST(SlowStart, TheWindowGrowsWithEachSuccessUpToTheWidth) {
  const std::size_t n = 24;
  Recorder r(n);
  std::vector<std::atomic<int>> calls(n);
  const auto error = run_slow_start(n, 4, [&](std::size_t i) {
    ++calls[i];
    r.run(i);
  });
  EXPECT_EQ(error, nullptr);
  for (std::size_t i = 0; i < n; ++i) {
    EXPECT_EQ(calls[i].load(), 1) << "task " << i;
    EXPECT_LE(r.active_at_start[i], 1 + r.done_at_start[i])
        << "task " << i << " started beyond the window";
  }
  EXPECT_EQ(r.active_at_start[0], 1U);
  EXPECT_EQ(r.peak, 4U) << "the window never reached the width";
}

TEST(SlowStart, AfterAFailureEveryRemainingTaskStillRunsOneAtATime) {
  const std::size_t n = 12;
  Recorder r(n);
  std::atomic<int> calls{0};
  std::atomic<bool> failed{false};
  std::vector<std::size_t> after_failure;
  std::mutex mu;
  const auto error = run_slow_start(n, 8, [&](std::size_t i) {
    ++calls;
    if (failed) {
      std::lock_guard lock(mu);
      after_failure.push_back(i);
    }
    if (i == 0) {
      failed = true;
      r.run(i, true);  // the first one fails: nothing ever ran beside it
    }
    r.run(i, i == 5);
  });
  EXPECT_EQ(calls.load(), static_cast<int>(n));
  ASSERT_NE(error, nullptr);
  try {
    std::rethrow_exception(error);
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "task 0");  // the first by index
  }
  EXPECT_EQ(after_failure.size(), n - 1);
  EXPECT_EQ(r.peak, 1U) << "tasks ran side by side after a failure";
}

TEST(SlowStart, NothingToDoAndAZeroWidth) {
  EXPECT_EQ(run_slow_start(0, 4, [](std::size_t) { FAIL(); }), nullptr);
  std::vector<std::size_t> order;
  EXPECT_EQ(run_slow_start(3, 0, [&](std::size_t i) { order.push_back(i); }), nullptr);
  EXPECT_EQ(order, (std::vector<std::size_t>{0, 1, 2}));
}

}  // namespace
}  // namespace ddp3d::op::controller
