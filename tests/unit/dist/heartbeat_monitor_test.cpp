#include "worker/dist/heartbeat_monitor.h"

#include <gtest/gtest.h>

namespace ddp3d::dist {
namespace {

using std::chrono::milliseconds;
using Clock = HeartbeatMonitor::Clock;

const Clock::time_point t0 = Clock::time_point() + std::chrono::hours(1);

HeartbeatRecord beat(long long n, const std::string& host = "node-a") {
  return HeartbeatRecord{n, false, host, 42};
}

TEST(HeartbeatRecord, RoundTripsAndRejectsGarbage) {
  const auto r = decode_heartbeat(encode_heartbeat(HeartbeatRecord{7, false, "pod-1.svc", 123}));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->counter, 7);
  EXPECT_FALSE(r->left);
  EXPECT_EQ(r->host, "pod-1.svc");
  EXPECT_EQ(r->pid, 123);
  const auto left = decode_heartbeat(encode_heartbeat(HeartbeatRecord{0, true, "h", 9}));
  ASSERT_TRUE(left);
  EXPECT_TRUE(left->left);
  for (const char* bad : {"", "7", "7 12", "x 12 h", "7 -1 h", "-7 12 h", "7 12x h", "7  h"}) {
    EXPECT_FALSE(decode_heartbeat(bad)) << bad;
  }
}

TEST(HeartbeatMonitor, APeerWhoseCounterStopsIsLostAfterTheTimeout) {
  HeartbeatMonitor m(0, 3, milliseconds(3000), t0);
  for (int i = 1; i <= 10; ++i) {
    const auto now = t0 + milliseconds(500 * i);
    m.observe(1, beat(i), now);
    m.observe(2, beat(i < 4 ? i : 3, "node-b"), now);  // rank 2 stops at 1.5 s
    m.store_answered(now);
  }
  EXPECT_FALSE(m.lost(t0 + milliseconds(4500)));  // 3.0 s silent: not yet beyond
  const auto lost = m.lost(t0 + milliseconds(4600));
  ASSERT_TRUE(lost);
  EXPECT_EQ(lost->rank, 2);
  EXPECT_EQ(lost->host, "node-b");
  EXPECT_FALSE(lost->store_silent);
  EXPECT_EQ(lost->silent, milliseconds(3100));
  const std::string text = describe_lost_peer(*lost, milliseconds(3000), "10.0.0.1:29500");
  EXPECT_EQ(text,
            "rank 2 (host node-b, pid 42) has not heartbeated for 3.1 s "
            "(env_cfg.dist_cfg.heartbeat_timeout 3.0 s): peer lost");
}

TEST(HeartbeatMonitor, ASlowStarterGetsOneTimeoutFromTheStart) {
  HeartbeatMonitor m(1, 2, milliseconds(1000), t0);
  m.store_answered(t0 + milliseconds(900));
  EXPECT_FALSE(m.lost(t0 + milliseconds(1000)));
  const auto lost = m.lost(t0 + milliseconds(1001));
  ASSERT_TRUE(lost);
  EXPECT_EQ(lost->rank, 0);
  EXPECT_EQ(lost->host, "");
  EXPECT_NE(describe_lost_peer(*lost, milliseconds(1000), "x:1").find("host unknown"),
            std::string::npos);
}

TEST(HeartbeatMonitor, ASilentStoreIsRankZeroLostOnOtherRanksOnly) {
  HeartbeatMonitor m(1, 2, milliseconds(1000), t0);
  m.observe(0, beat(5, "master"), t0 + milliseconds(100));
  m.store_answered(t0 + milliseconds(100));
  // Rank 0's counter was seen at 100 ms, so it is the longest-silent peer either way; with a
  // store that answers and a rank 0 that beats, only the store can be silent.
  for (int i = 2; i <= 20; ++i) m.observe(0, beat(5 + i, "master"), t0 + milliseconds(100 * i));
  const auto lost = m.lost(t0 + milliseconds(2100));
  ASSERT_TRUE(lost);
  EXPECT_TRUE(lost->store_silent);
  EXPECT_EQ(lost->rank, 0);
  EXPECT_EQ(lost->host, "master");
  EXPECT_EQ(describe_lost_peer(*lost, milliseconds(1000), "10.0.0.1:29500"),
            "the rendezvous store at 10.0.0.1:29500, hosted by rank 0 (host master, pid 42), "
            "has not answered for 2.0 s (env_cfg.dist_cfg.heartbeat_timeout 1.0 s): peer lost");

  HeartbeatMonitor on_zero(0, 2, milliseconds(1000), t0);
  for (int i = 1; i <= 20; ++i) on_zero.observe(1, beat(i), t0 + milliseconds(100 * i));
  EXPECT_FALSE(on_zero.lost(t0 + milliseconds(2100)));  // its own store: not judged
}

TEST(HeartbeatMonitor, RankZeroAndTheStoreSilentTogetherIsTheStoreThatWentAway) {
  // SIGSTOP on rank 0: its last beat and the store's last answer are about one interval
  // apart, and rank 0 goes silent past the timeout first. The verdict names the store.
  HeartbeatMonitor m(1, 2, milliseconds(1000), t0);
  m.observe(0, beat(5, "master"), t0 + milliseconds(100));
  m.store_answered(t0 + milliseconds(400));
  const auto lost = m.lost(t0 + milliseconds(1150));
  ASSERT_TRUE(lost);
  EXPECT_EQ(lost->rank, 0);
  EXPECT_TRUE(lost->store_silent);
  // A store that still answers while rank 0's counter stands still: rank 0 itself is stuck.
  m.store_answered(t0 + milliseconds(1100));
  const auto stuck = m.lost(t0 + milliseconds(1150));
  ASSERT_TRUE(stuck);
  EXPECT_FALSE(stuck->store_silent);
}

TEST(HeartbeatMonitor, RestartCountsSilenceFromThen) {
  HeartbeatMonitor m(1, 3, milliseconds(1000), t0);
  m.observe(2, beat(1, "b"), t0);
  m.restart(t0 + milliseconds(5000));
  EXPECT_FALSE(m.lost(t0 + milliseconds(5900)));
  const auto lost = m.lost(t0 + milliseconds(6100));
  ASSERT_TRUE(lost);
  EXPECT_EQ(lost->silent, milliseconds(1100));
}

TEST(HeartbeatMonitor, NothingIsLostOnceAPeerLeftOrThisRankStopsWatching) {
  HeartbeatMonitor m(0, 3, milliseconds(1000), t0);
  m.observe(1, HeartbeatRecord{0, true, "a", 1}, t0 + milliseconds(10));
  EXPECT_FALSE(m.all_peers_left());
  EXPECT_FALSE(m.lost(t0 + milliseconds(5000)));  // rank 2 silent, but the group has ended
  m.observe(2, HeartbeatRecord{0, true, "b", 2}, t0 + milliseconds(20));
  EXPECT_TRUE(m.all_peers_left());

  HeartbeatMonitor w(0, 2, milliseconds(1000), t0);
  EXPECT_TRUE(w.lost(t0 + milliseconds(5000)));
  w.stop_watching();
  EXPECT_FALSE(w.lost(t0 + milliseconds(5000)));
}

TEST(HeartbeatMonitor, ARepeatedCounterIsNoBeat) {
  HeartbeatMonitor m(0, 2, milliseconds(1000), t0);
  m.observe(1, beat(3), t0 + milliseconds(500));
  m.observe(1, beat(3), t0 + milliseconds(1400));  // re-read, unchanged
  EXPECT_TRUE(m.lost(t0 + milliseconds(1600)));
  m.observe(1, beat(4), t0 + milliseconds(1700));
  EXPECT_FALSE(m.lost(t0 + milliseconds(1800)));
}

}  // namespace
}  // namespace ddp3d::dist
