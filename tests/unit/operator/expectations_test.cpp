#include "operator/controller/expectations.h"

#include <gtest/gtest.h>

#include <memory>

#include "job_fixtures.h"

namespace ddp3d::op::controller {
namespace {

using std::chrono::seconds;
using testing::parse;
using web::json::value;

const Clock::time_point t0{};

TEST(ChildExpectations, NothingInFlightMeansActNow) {
  ChildExpectations e(seconds(60));
  EXPECT_FALSE(e.pending("ns/job", t0));
}

TEST(ChildExpectations, WaitsUntilEveryCreateIsSeen) {
  ChildExpectations e(seconds(60));
  e.expect_create("ns/job", "pod/job-0", t0);
  e.expect_create("ns/job", "pod/job-1", t0);
  e.expect_create("ns/job", "service/job", t0);
  ASSERT_TRUE(e.pending("ns/job", t0 + seconds(1)));
  EXPECT_EQ(*e.pending("ns/job", t0 + seconds(1)), seconds(59));
  e.created("ns/job", "pod/job-0");
  e.created("ns/job", "service/job");
  EXPECT_TRUE(e.pending("ns/job", t0 + seconds(1))) << "pod/job-1 is still unseen";
  EXPECT_FALSE(e.pending("ns/other", t0)) << "expectations are per job";
  e.created("ns/job", "pod/job-1");
  EXPECT_FALSE(e.pending("ns/job", t0 + seconds(1)));
  EXPECT_EQ(e.jobs_waiting(), 0u);
}

TEST(ChildExpectations, PodAndServiceOfTheSameNameAreDistinct) {
  ChildExpectations e(seconds(60));
  e.expect_create("ns/job", "pod/x", t0);
  e.expect_create("ns/job", "service/x", t0);
  e.created("ns/job", "service/x");
  EXPECT_TRUE(e.pending("ns/job", t0));
}

TEST(ChildExpectations, DeletesAreMetByDeletesOnly) {
  ChildExpectations e(seconds(60));
  e.expect_delete("ns/job", "pod/job-0", t0);
  e.created("ns/job", "pod/job-0");  // an add/update event of the old pod: not the delete
  EXPECT_TRUE(e.pending("ns/job", t0));
  e.deleted("ns/job", "pod/job-0");
  EXPECT_FALSE(e.pending("ns/job", t0));
}

TEST(ChildExpectations, UnexpectedObservationsAreHarmless) {
  ChildExpectations e(seconds(60));
  e.created("ns/job", "pod/job-9");
  e.deleted("ns/job", "pod/job-9");
  EXPECT_FALSE(e.pending("ns/job", t0));
  EXPECT_EQ(e.jobs_waiting(), 0u);
}

TEST(ChildExpectations, ALostEventTimesOutInsteadOfStallingTheJob) {
  ChildExpectations e(seconds(60));
  e.expect_create("ns/job", "pod/job-0", t0);
  e.expect_create("ns/job", "pod/job-1", t0 + seconds(30));
  ASSERT_TRUE(e.pending("ns/job", t0 + seconds(59)));
  EXPECT_EQ(*e.pending("ns/job", t0 + seconds(59)), seconds(1)) << "the oldest one times out next";
  ASSERT_TRUE(e.pending("ns/job", t0 + seconds(60)));
  EXPECT_EQ(*e.pending("ns/job", t0 + seconds(60)), seconds(30)) << "job-0 dropped, job-1 left";
  EXPECT_FALSE(e.pending("ns/job", t0 + seconds(90)));
  EXPECT_EQ(e.jobs_waiting(), 0u);
}

TEST(ChildExpectations, ForgetDropsTheJob) {
  ChildExpectations e(seconds(60));
  e.expect_create("ns/job", "pod/job-0", t0);
  e.forget("ns/job");
  EXPECT_FALSE(e.pending("ns/job", t0));
}

StatusExpectations::ObjectPtr job(const std::string& uid, const std::string& rv,
                                  const std::string& phase) {
  return std::make_shared<const value>(parse(R"({"metadata": {"name": "j", "uid": ")" + uid +
                                             R"(", "resourceVersion": ")" + rv +
                                             R"("}, "status": {"phase": ")" + phase + R"("}})"));
}

std::string phase(const StatusExpectations::ObjectPtr& o) {
  return o->at("status").at("phase").as_string();
}

TEST(StatusExpectations, WithoutAWriteTheCacheIsUsed) {
  StatusExpectations s(seconds(60));
  auto cached = job("u", "5", "New");
  EXPECT_EQ(s.freshest("ns/j", cached, t0).get(), cached.get());
}

TEST(StatusExpectations, TheWriteWinsUntilTheCacheShowsIt) {
  StatusExpectations s(seconds(60));
  auto cached = job("u", "5", "New");
  s.wrote("ns/j", *cached, job("u", "9", "Starting"), t0);
  EXPECT_EQ(phase(s.freshest("ns/j", cached, t0)), "Starting") << "cache still at 5";
  // The informer delivers our write: the cache is the truth again and the record goes.
  auto caught_up = job("u", "9", "Starting");
  EXPECT_EQ(s.freshest("ns/j", caught_up, t0).get(), caught_up.get());
  EXPECT_EQ(s.size(), 0u);
}

TEST(StatusExpectations, AVersionNeverSeenIsNewerWhateverItsDigits) {
  // resourceVersions are opaque: "10" after "9" and "1a" after "9" are both just "other".
  StatusExpectations s(seconds(60));
  s.wrote("ns/j", *job("u", "9", "New"), job("u", "10", "Starting"), t0);
  auto later = job("u", "1a", "Running");  // someone else wrote after us
  EXPECT_EQ(phase(s.freshest("ns/j", later, t0)), "Running");
}

TEST(StatusExpectations, ChainedWritesKeepEveryOlderVersionStale) {
  StatusExpectations s(seconds(60));
  auto cached = job("u", "5", "New");
  s.wrote("ns/j", *cached, job("u", "6", "Starting"), t0);
  // Next reconcile works from our write (the cache is still at 5) and writes again.
  auto base = s.freshest("ns/j", cached, t0);
  s.wrote("ns/j", *base, job("u", "7", "Running"), t0);
  EXPECT_EQ(phase(s.freshest("ns/j", cached, t0)), "Running") << "5 is stale";
  EXPECT_EQ(phase(s.freshest("ns/j", job("u", "6", "Starting"), t0)), "Running") << "6 too";
  EXPECT_EQ(phase(s.freshest("ns/j", job("u", "7", "Running"), t0)), "Running");
  EXPECT_EQ(s.size(), 0u);
}

TEST(StatusExpectations, ARecreatedJobIsNotConfusedWithTheOldOne) {
  StatusExpectations s(seconds(60));
  s.wrote("ns/j", *job("old", "5", "New"), job("old", "6", "Failed"), t0);
  auto fresh = job("new", "5", "New");  // same name, new object; rv digits may even repeat
  EXPECT_EQ(s.freshest("ns/j", fresh, t0).get(), fresh.get());
}

TEST(StatusExpectations, TimesOutToTheCache) {
  StatusExpectations s(seconds(60));
  auto cached = job("u", "5", "New");
  s.wrote("ns/j", *cached, job("u", "6", "Starting"), t0);
  EXPECT_EQ(s.freshest("ns/j", cached, t0 + seconds(60)).get(), cached.get());
  EXPECT_EQ(s.size(), 0u);
}

}  // namespace
}  // namespace ddp3d::op::controller
