#include "operator/kube/interruptible_sleep.h"

#include <gtest/gtest.h>

#include <thread>

namespace ddp3d::kube {
namespace {

using namespace std::chrono_literals;

TEST(InterruptibleSleep, FullSleepReturnsTrue) {
  std::stop_source src;
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_TRUE(detail::sleep_for(30ms, src.get_token()));
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 30ms);
}

TEST(InterruptibleSleep, StopCutsTheSleepShortAndReturnsFalse) {
  std::stop_source src;
  std::thread stopper([&] {
    std::this_thread::sleep_for(20ms);
    src.request_stop();
  });
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(detail::sleep_for(10s, src.get_token()));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
  stopper.join();
  EXPECT_FALSE(detail::sleep_for(10s, src.get_token())) << "already stopped: no sleep at all";
}

}  // namespace
}  // namespace ddp3d::kube
