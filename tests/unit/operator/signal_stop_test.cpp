// SIGTERM and SIGINT become a stop request on SignalStop's thread, not a default death.
#include "operator/runtime/signal_stop.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace ddp3d::op::runtime {
namespace {

using namespace std::chrono_literals;

// Waits up to `timeout` for `token` to be stopped; returns whether it was.
bool stopped_within(const std::stop_token& token, std::chrono::milliseconds timeout) {
  std::mutex mu;
  std::condition_variable_any cv;
  std::unique_lock lock(mu);
  cv.wait_for(lock, token, timeout, [] { return false; });
  return token.stop_requested();
}

class SignalStopTest : public ::testing::TestWithParam<int> {};

TEST_P(SignalStopTest, ASignalToTheProcessRequestsStop) {
  // This process's only thread blocks them, so the signal stays pending for SignalStop.
  const sigset_t signals = block_stop_signals();
  SignalStop stop(signals);
  EXPECT_FALSE(stop.token().stop_requested());
  ASSERT_EQ(kill(getpid(), GetParam()), 0);
  EXPECT_TRUE(stopped_within(stop.token(), 10s));
}

INSTANTIATE_TEST_SUITE_P(Signals, SignalStopTest, ::testing::Values(SIGTERM, SIGINT));

TEST(SignalStop, DestroyingItWithoutASignalJoinsPromptly) {
  const sigset_t signals = block_stop_signals();
  const auto t0 = std::chrono::steady_clock::now();
  { SignalStop stop(signals); }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
}

}  // namespace
}  // namespace ddp3d::op::runtime
