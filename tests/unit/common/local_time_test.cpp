#include "common/local_time.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>
#include <optional>
#include <string>

namespace {

// Runs the test in UTC and puts the process's time zone back afterwards.
class LocalTimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* tz = std::getenv("TZ")) saved_ = tz;
    setenv("TZ", "UTC", 1);
    tzset();
  }
  void TearDown() override {
    if (saved_) {
      setenv("TZ", saved_->c_str(), 1);
    } else {
      unsetenv("TZ");
    }
    tzset();
  }

 private:
  std::optional<std::string> saved_;
};

TEST_F(LocalTimeTest, FormatsTheRunFolderAndLogLineStamps) {
  EXPECT_EQ(ddp3d::format_local_time(0, "%Y%m%d_%H%M%S"), "19700101_000000");
  EXPECT_EQ(ddp3d::format_local_time(1700000000, "%Y/%m/%d %H:%M:%S"), "2023/11/14 22:13:20");
  EXPECT_EQ(ddp3d::format_local_time(1700000000, "%m/%d %H:%M:%S"), "11/14 22:13:20");
}

TEST_F(LocalTimeTest, FollowsTheTimeZone) {
  setenv("TZ", "UTC-2", 1);  // POSIX: two hours east of UTC
  tzset();
  EXPECT_EQ(ddp3d::format_local_time(0, "%H:%M"), "02:00");
}

TEST_F(LocalTimeTest, AnOutputLongerThanTheFirstBufferIsReturnedWhole) {
  const std::string prefix(300, 'x');
  EXPECT_EQ(ddp3d::format_local_time(0, (prefix + "%Y").c_str()), prefix + "1970");
  EXPECT_EQ(ddp3d::format_local_time(0, ""), "");
}

}  // namespace
