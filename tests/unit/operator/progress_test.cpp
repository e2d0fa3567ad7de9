#include "operator/controller/progress.h"

#include <gtest/gtest.h>

#include "operator/api/timestamps.h"

namespace ddp3d::op::controller {
namespace {

constexpr api::UnixSeconds kT0 = 1796033609;  // 2026-11-30T10:13:29Z

ProgressScrape sample(api::UnixSeconds t, double steps, std::optional<double> max = std::nullopt,
                      std::optional<double> epoch = std::nullopt) {
  ProgressScrape s;
  s.time = t;
  s.metrics.steps = steps;
  s.metrics.max_steps = max;
  s.metrics.epoch = epoch;
  return s;
}

ProgressScrape failed(api::UnixSeconds t, const std::string& error) {
  ProgressScrape s;
  s.time = t;
  s.error = error;
  return s;
}

std::vector<RankScrape> ranks(const std::vector<const ProgressScrape*>& scrapes) {
  std::vector<RankScrape> out;
  for (size_t r = 0; r < scrapes.size(); ++r) {
    out.push_back({static_cast<int>(r), "pp-node-" + std::to_string(r), "node-" + std::to_string(r),
                   scrapes[r]});
  }
  return out;
}

TEST(FoldProgress, FirstSampleIsTheBaselineWithoutRate) {
  const auto a = sample(kT0, 100, 1000, 2);
  const auto b = sample(kT0 + 1, 120, 1000, 2);
  const auto p = fold_progress(std::nullopt, 0, ranks({&a, &b}));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->step, 100) << "the lowest rank's step is the gang's";
  EXPECT_EQ(p->epoch, 2);
  EXPECT_EQ(p->max_steps, 1000);
  EXPECT_EQ(p->last_progress_time, api::format_rfc3339(kT0 + 1));
  EXPECT_FALSE(p->steps_per_second);
  EXPECT_FALSE(p->eta_seconds) << "no rate, no ETA";
  EXPECT_EQ(p->eta, "");
}

TEST(FoldProgress, AnAdvanceGivesRateAndEtaFromItsOwnTime) {
  const auto a0 = sample(kT0, 100, 1000);
  auto p = fold_progress(std::nullopt, 0, ranks({&a0}));
  const auto a1 = sample(kT0 + 10, 150, 1000);
  p = fold_progress(p, 0, ranks({&a1}));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->step, 150);
  EXPECT_EQ(p->steps_per_second, 5.0);
  EXPECT_EQ(p->eta_seconds, 170);  // 850 steps at 5/s
  EXPECT_EQ(p->eta, "2m50s");
  EXPECT_EQ(p->estimated_completion_time, api::format_rfc3339(kT0 + 10 + 170));
  // The next advance is averaged in with weight 1/2.
  const auto a2 = sample(kT0 + 20, 250, 1000);
  p = fold_progress(p, 0, ranks({&a2}));
  EXPECT_EQ(p->steps_per_second, 7.5);
  EXPECT_EQ(p->eta_seconds, 100);
  // The same sample again changes nothing: a reconcile without news writes nothing.
  EXPECT_EQ(fold_progress(p, 0, ranks({&a2})), p);
}

TEST(FoldProgress, NoValidSampleKeepsWhatWasStored) {
  const auto a0 = sample(kT0, 100);
  const auto p = fold_progress(std::nullopt, 0, ranks({&a0}));
  const auto err = failed(kT0 + 5, "connect: Connection refused");
  EXPECT_EQ(fold_progress(p, 0, ranks({&err, nullptr})), p);
  EXPECT_EQ(fold_progress(std::nullopt, 0, ranks({&err})), std::nullopt);
}

TEST(FoldProgress, ANewAttemptOrALowerStepStartsANewBaselineKeepingTheRate) {
  auto p = fold_progress(std::nullopt, 0, ranks({}));
  EXPECT_FALSE(p);
  const auto a0 = sample(kT0, 100, 1000);
  const auto a1 = sample(kT0 + 10, 200, 1000);
  p = fold_progress(fold_progress(std::nullopt, 0, ranks({&a0})), 0, ranks({&a1}));
  ASSERT_EQ(p->steps_per_second, 10.0);
  const auto resumed = sample(kT0 + 100, 180, 1000);  // attempt 1 resumed from a checkpoint
  const auto q = fold_progress(p, 1, ranks({&resumed}));
  EXPECT_EQ(q->attempt, 1);
  EXPECT_EQ(q->step, 180);
  EXPECT_EQ(q->last_progress_time, api::format_rfc3339(kT0 + 100));
  EXPECT_EQ(q->steps_per_second, 10.0);
  EXPECT_EQ(q->eta_seconds, 82);
}

TEST(FoldProgress, AnAdvanceWithinTheSameSecondTakesTheStepButNoRate) {
  const auto a0 = sample(kT0, 100, 1000);
  const auto p = fold_progress(std::nullopt, 0, ranks({&a0}));
  const auto same_second = sample(kT0, 110, 1000);
  const auto q = fold_progress(p, 0, ranks({&same_second}));
  EXPECT_EQ(q->step, 110);
  EXPECT_FALSE(q->steps_per_second) << "no division by zero";
  EXPECT_EQ(q->last_progress_time, p->last_progress_time);
  // The next advance measures from that second: 110 was seen at kT0, 130 at kT0 + 3.
  const auto later = sample(kT0 + 3, 130, 1000);
  EXPECT_EQ(fold_progress(q, 0, ranks({&later}))->steps_per_second, 6.667);
}

TEST(FoldProgress, FinishedAndHugeEtas) {
  const auto a0 = sample(kT0, 0, 1e15);
  const auto a1 = sample(kT0 + 1000, 1, 1e15);
  const auto p = fold_progress(fold_progress(std::nullopt, 0, ranks({&a0})), 0, ranks({&a1}));
  EXPECT_EQ(p->eta_seconds, int64_t{10} * 365 * 24 * 3600) << "capped, not overflowed";
  const auto b0 = sample(kT0, 90, 100);
  const auto b1 = sample(kT0 + 1, 120, 100);  // past the plan
  const auto q = fold_progress(fold_progress(std::nullopt, 0, ranks({&b0})), 0, ranks({&b1}));
  EXPECT_EQ(q->eta_seconds, 0);
  EXPECT_EQ(q->eta, "0s");
}

TEST(PickStalledRank, ASilentRankIsBlamedFirst) {
  const auto ok = sample(kT0, 100);
  const auto low = sample(kT0, 50);
  const auto err = failed(kT0, "read: timed out after 2000 ms");
  const auto s = pick_stalled_rank(ranks({&ok, &low, &err, nullptr}));
  EXPECT_EQ(s.rank, 2);
  EXPECT_EQ(s.pod, "pp-node-2");
  EXPECT_EQ(s.node, "node-2");
  EXPECT_FALSE(s.step);
  EXPECT_EQ(s.why, "its metrics: read: timed out after 2000 ms");
  const auto never = pick_stalled_rank(ranks({&ok, &ok, nullptr, &err}));
  EXPECT_EQ(never.rank, 2);
  EXPECT_EQ(never.why, "its metrics not scraped yet");
}

TEST(PickStalledRank, TheLowestStepElseRankZero) {
  const auto a = sample(kT0, 100);
  const auto b = sample(kT0, 40);
  const auto s = pick_stalled_rank(ranks({&a, &a, &b, &b}));
  EXPECT_EQ(s.rank, 2);
  EXPECT_EQ(s.step, 40);
  EXPECT_EQ(s.why, "the lowest step, 40");
  const auto all = pick_stalled_rank(ranks({&a, &a, &a}));
  EXPECT_EQ(all.rank, 0);
  EXPECT_EQ(all.why, "every rank is at step 100");
}

TEST(FormatEta, UnitsThatFit) {
  EXPECT_EQ(format_eta(-5), "0s");
  EXPECT_EQ(format_eta(45), "45s");
  EXPECT_EQ(format_eta(750), "12m30s");
  EXPECT_EQ(format_eta(3 * 3600 + 5 * 60 + 59), "3h05m");
  EXPECT_EQ(format_eta(2 * 86400 + 4 * 3600), "2d04h");
}

}  // namespace
}  // namespace ddp3d::op::controller
