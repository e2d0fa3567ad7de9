// Leader-election record handling and the pure rules of who may take a lease.
#include "operator/kube/lease.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace ddp3d::kube {
namespace {

using namespace std::chrono;
using namespace std::chrono_literals;

TEST(MicroTime, FormatsUtcWithMicroseconds) {
  const SystemTime t = sys_days(2026y / November / 30) + 10h + 5min + 7s + 123456us;
  EXPECT_EQ(format_micro_time(t), "2026-11-30T10:05:07.123456Z");
  EXPECT_EQ(format_micro_time(sys_days(1999y / January / 2)), "1999-01-02T00:00:00.000000Z");
}

TEST(MicroTime, ParsesWhatItFormatsAndOtherRfc3339Forms) {
  const SystemTime t = sys_days(2026y / November / 30) + 10h + 5min + 7s + 123456us;
  EXPECT_EQ(parse_micro_time(format_micro_time(t)), t);
  EXPECT_EQ(parse_micro_time("2026-11-30T10:05:07Z"), t - 123456us);
  EXPECT_EQ(parse_micro_time("2026-11-30T12:05:07.123456+02:00"), t);
  EXPECT_EQ(parse_micro_time("2026-11-30T10:05:07.1234569Z"), t) << "nanoseconds truncated";
  EXPECT_EQ(parse_micro_time("2026-11-30T10:05:07.5Z"), t - 123456us + 500ms);
}

TEST(MicroTime, RejectsMalformedText) {
  for (const char* bad : {"", "2026-11-30", "2026-11-30T10:05:07", "2026-13-01T00:00:00Z",
                          "2026-11-30T10:05:07.Z", "2026-11-30T10:05:07Zjunk", "yesterday"}) {
    EXPECT_THROW(parse_micro_time(bad), std::invalid_argument) << bad;
  }
}

TEST(LeaseRecord, RoundTripsThroughALeaseObject) {
  LeaseRecord r;
  r.holder_identity = "host_42";
  r.lease_duration_seconds = 15;
  r.acquire_time = sys_days(2026y / 1 / 1) + 1s;
  r.renew_time = sys_days(2026y / 1 / 1) + 3s + 250us;
  r.lease_transitions = 4;
  auto lease = web::json::value::parse(
      R"({"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"l","resourceVersion":"9"}})");
  write_lease_record(lease, r);
  EXPECT_EQ(lease.at("spec").at("renewTime").as_string(), "2026-01-01T00:00:03.000250Z");
  EXPECT_EQ(lease.at("metadata").at("resourceVersion").as_string(), "9") << "metadata kept";
  EXPECT_EQ(lease_record_from(lease), r);
  EXPECT_EQ(lease_record_from(web::json::value::object()), LeaseRecord{});
}

TEST(MayAcquire, FreeOwnOrExpiredLeasesOnly) {
  const auto t0 = steady_clock::time_point{} + 1000s;
  LeaseRecord held;
  held.holder_identity = "a";
  held.lease_duration_seconds = 15;
  EXPECT_TRUE(may_acquire(LeaseRecord{}, "b", t0, t0)) << "nobody holds it";
  EXPECT_TRUE(may_acquire(held, "a", t0, t0 + 100s)) << "the holder renews";
  EXPECT_FALSE(may_acquire(held, "b", t0, t0 + 14s)) << "still valid";
  EXPECT_TRUE(may_acquire(held, "b", t0, t0 + 15s)) << "expired since our observation";
}

TEST(NextRecord, RenewalKeepsAcquireTimeTakeoverCountsATransition) {
  const SystemTime t1 = sys_days(2026y / 1 / 1), t2 = t1 + 5s;
  const LeaseRecord fresh = next_record({}, "a", 15s, t1);
  EXPECT_EQ(fresh.holder_identity, "a");
  EXPECT_EQ(fresh.lease_transitions, 0);
  EXPECT_EQ(fresh.acquire_time, t1);
  EXPECT_EQ(fresh.lease_duration_seconds, 15);

  const LeaseRecord renewed = next_record(fresh, "a", 15s, t2);
  EXPECT_EQ(renewed.acquire_time, t1);
  EXPECT_EQ(renewed.renew_time, t2);
  EXPECT_EQ(renewed.lease_transitions, 0);

  const LeaseRecord taken = next_record(renewed, "b", 15s, t2);
  EXPECT_EQ(taken.holder_identity, "b");
  EXPECT_EQ(taken.acquire_time, t2);
  EXPECT_EQ(taken.lease_transitions, 1);

  LeaseRecord released = taken;
  released.holder_identity.clear();
  EXPECT_EQ(next_record(released, "a", 15s, t2).lease_transitions, 2);
}

}  // namespace
}  // namespace ddp3d::kube
