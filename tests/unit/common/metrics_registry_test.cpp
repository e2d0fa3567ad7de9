// Registry semantics: registration rules and their error messages, counter/gauge/histogram
// behaviour, and exact totals under concurrent updates.
#include <gtest/gtest.h>

#include <limits>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/metrics/names.h"
#include "common/metrics/registry.h"

namespace ddp3d::metrics {
namespace {

// Asserts that f throws E whose message contains `needle` (the name the user must fix).
template <class E, class F>
void expect_throw_naming(F&& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "expected an exception mentioning '" << needle << "'";
  } catch (const E& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
        << "message '" << e.what() << "' does not mention '" << needle << "'";
  }
}

TEST(Names, MetricNameRules) {
  EXPECT_TRUE(is_valid_metric_name("ddp3d_x_total"));
  EXPECT_TRUE(is_valid_metric_name("_x:rate5m"));
  EXPECT_TRUE(is_valid_metric_name(":x"));
  EXPECT_FALSE(is_valid_metric_name(""));
  EXPECT_FALSE(is_valid_metric_name("1x"));
  EXPECT_FALSE(is_valid_metric_name("x-y"));
  EXPECT_FALSE(is_valid_metric_name("x y"));
  EXPECT_FALSE(is_valid_metric_name("é"));
}

TEST(Names, LabelNameRules) {
  EXPECT_TRUE(is_valid_label_name("rank"));
  EXPECT_TRUE(is_valid_label_name("_x1"));
  EXPECT_FALSE(is_valid_label_name(""));
  EXPECT_FALSE(is_valid_label_name("__name__"));
  EXPECT_FALSE(is_valid_label_name("a:b"));
  EXPECT_FALSE(is_valid_label_name("9a"));
}

TEST(Registry, InvalidNamesAreRejectedWithTheName) {
  Registry r;
  expect_throw_naming<std::invalid_argument>([&] { r.gauge("bad-name", "h"); }, "'bad-name'");
  expect_throw_naming<std::invalid_argument>(
      [&] {
        r.gauge("ok", "h", {"ok", "bad.label"});
      },
      "'bad.label'");
  expect_throw_naming<std::invalid_argument>([&] { r.gauge("ok2", "h", {"__x"}); }, "'__x'");
  expect_throw_naming<std::invalid_argument>(
      [&] {
        r.gauge("ok3", "h", {"a", "a"});
      },
      "duplicate label name 'a'");
  expect_throw_naming<std::invalid_argument>([&] { r.gauge("ok4", ""); }, "'ok4'");
  expect_throw_naming<std::invalid_argument>([&] { r.counter("ddp3d_steps", "h"); },
                                             "'ddp3d_steps'");
  expect_throw_naming<std::invalid_argument>([&] { r.histogram("h", "h", {1}, {"le"}); }, "'le'");
  // Nothing half-registered after the failures.
  EXPECT_EQ(r.expose(), "");
}

TEST(Registry, SameDefinitionReturnsSameFamilyDifferentOneThrows) {
  Registry r;
  auto& a = r.counter("x_total", "Help.", {"k"});
  auto& b = r.counter("x_total", "Help.", {"k"});
  EXPECT_EQ(&a, &b);
  expect_throw_naming<std::invalid_argument>([&] { r.gauge("x_total", "Help.", {"k"}); },
                                             "already registered as a counter");
  expect_throw_naming<std::invalid_argument>([&] { r.counter("x_total", "Other.", {"k"}); },
                                             "help");
  expect_throw_naming<std::invalid_argument>([&] { r.counter("x_total", "Help.", {"j"}); },
                                             "label names");
  auto& h = r.histogram("h_seconds", "H.", {1, 2});
  EXPECT_EQ(&h, &r.histogram("h_seconds", "H.", {1, 2}));
  expect_throw_naming<std::invalid_argument>(
      [&] {
        r.histogram("h_seconds", "H.", {1, 3});
      },
      "buckets");
}

TEST(Registry, HistogramSampleNamesCannotBeReused) {
  Registry r;
  r.histogram("lat_seconds", "H.", {1});
  expect_throw_naming<std::invalid_argument>([&] { r.gauge("lat_seconds_count", "G."); },
                                             "'lat_seconds_count'");
  EXPECT_NO_THROW(r.counter("lat_seconds_count_total", "C."));  // a different sample name
  r.histogram("q_sum", "H.", {1});
  expect_throw_naming<std::invalid_argument>([&] { r.histogram("q", "H.", {1}); }, "'q_sum'");
}

TEST(Registry, HistogramSuffixesAreReservedForHistograms) {
  Registry r;
  for (const char* name : {"jobs_count", "jobs_sum", "jobs_bucket"}) {
    expect_throw_naming<std::invalid_argument>([&] { r.gauge(name, "G."); },
                                               "reserved for histograms");
  }
}

TEST(Registry, LabelValueCountMustMatch) {
  Registry r;
  auto& g = r.gauge("g", "G.", {"a", "b"});
  expect_throw_naming<std::invalid_argument>([&] { g.labels({"only-one"}); }, "{a, b}");
  expect_throw_naming<std::logic_error>([&] { g.set(1); }, "'g'");
}

TEST(Counter, RejectsNegativeAndNaNIncrements) {
  Registry r;
  auto& c = r.counter("c_total", "C.");
  c.inc(2.5);
  expect_throw_naming<std::invalid_argument>([&] { c.inc(-1); }, "-1");
  EXPECT_THROW(c.inc(std::numeric_limits<double>::quiet_NaN()), std::invalid_argument);
  EXPECT_EQ(c.value(), 2.5);
}

TEST(Gauge, SetIncDec) {
  Registry r;
  auto& g = r.gauge("g", "G.");
  g.set(5);
  g.inc();
  g.dec(2.5);
  EXPECT_EQ(g.value(), 3.5);
}

TEST(Histogram, BucketValidation) {
  EXPECT_THROW(Histogram({1, 1}), std::invalid_argument);
  EXPECT_THROW(Histogram({2, 1}), std::invalid_argument);
  EXPECT_THROW(Histogram({std::numeric_limits<double>::quiet_NaN()}), std::invalid_argument);
  EXPECT_THROW(Histogram({-std::numeric_limits<double>::infinity(), 1}), std::invalid_argument);
  // A trailing +Inf is the implied bucket and is dropped.
  EXPECT_EQ(Histogram({1, std::numeric_limits<double>::infinity()}).upper_bounds(),
            std::vector<double>{1});
}

TEST(Histogram, BucketHelpers) {
  EXPECT_EQ(linear_buckets(1, 2, 3), (std::vector<double>{1, 3, 5}));
  EXPECT_EQ(exponential_buckets(1, 2, 4), (std::vector<double>{1, 2, 4, 8}));
  EXPECT_THROW(linear_buckets(0, 0, 3), std::invalid_argument);
  EXPECT_THROW(exponential_buckets(0, 2, 3), std::invalid_argument);
  EXPECT_THROW(exponential_buckets(1, 1, 3), std::invalid_argument);
  EXPECT_EQ(default_buckets().size(), 11u);
}

TEST(Histogram, SnapshotIsCumulative) {
  Histogram h({1, 2});
  h.observe(0.5);
  h.observe(1);  // on the bound: counts in le="1"
  h.observe(1.5);
  h.observe(99);
  const auto s = h.snapshot();
  EXPECT_EQ(s.cumulative, (std::vector<std::uint64_t>{2, 3, 4}));
  EXPECT_EQ(s.count, 4u);
  EXPECT_EQ(s.sum, 102.0);
}

TEST(Family, RemoveDropsSeries) {
  Registry r;
  auto& g = r.gauge("g", "G.", {"job"});
  g.labels({"a"}).set(1);
  g.labels({"b"}).set(2);
  EXPECT_TRUE(g.remove({"a"}));
  EXPECT_FALSE(g.remove({"a"}));
  EXPECT_EQ(g.size(), 1u);
  EXPECT_EQ(r.expose().find("job=\"a\""), std::string::npos);
  EXPECT_NE(r.expose().find("g{job=\"b\"} 2"), std::string::npos);
}

TEST(Concurrency, ParallelUpdatesGiveExactTotals) {
  Registry r;
  auto& c = r.counter("c_total", "C.", {"worker"});
  auto& total = r.counter("all_total", "All.");
  auto& g = r.gauge("g", "G.");
  auto& h = r.histogram("h", "H.", {0.5});
  constexpr int kThreads = 8;
  constexpr int kIters = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kIters; ++i) {
        total.inc();
        // Half the threads share a series and create it concurrently.
        c.labels({t % 2 == 0 ? "even" : std::to_string(t)}).inc();
        g.inc();
        g.dec(0.5);
        h.observe(i % 2 == 0 ? 0.25 : 1.0);
        if (i % 1000 == 0) (void)r.expose();  // scraping while writing must be safe
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(total.value(), kThreads * kIters);
  EXPECT_EQ(c.labels({"even"}).value(), (kThreads / 2) * kIters);
  EXPECT_EQ(c.labels({"1"}).value(), kIters);
  EXPECT_EQ(g.value(), kThreads * kIters * 0.5);
  const auto s = h.snapshot();
  EXPECT_EQ(s.count, static_cast<std::uint64_t>(kThreads * kIters));
  EXPECT_EQ(s.cumulative[0], static_cast<std::uint64_t>(kThreads * kIters / 2));
  EXPECT_EQ(s.sum, kThreads * (kIters / 2) * 1.25);
}

TEST(Concurrency, ConcurrentRegistrationYieldsOneFamily) {
  Registry r;
  std::vector<CounterFamily*> seen(8);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] { seen[t] = &r.counter("race_total", "Race."); });
  }
  for (auto& th : threads) th.join();
  for (auto* f : seen) EXPECT_EQ(f, seen[0]);
}

struct FixedCollector : Collector {
  std::vector<FamilySnapshot> collect() const override {
    return {FamilySnapshot{
        "aaa_from_collector", "From a collector.", MetricType::kGauge, {Sample{"", {}, 7}}}};
  }
};

TEST(Collector, MergedSortedAndNameClashRejected) {
  Registry r;
  r.gauge("zzz", "Z.").set(1);
  r.add_collector(std::make_shared<FixedCollector>());
  const std::string text = r.expose();
  EXPECT_EQ(text.find("# HELP aaa_from_collector From a collector.\n"), 0u);
  EXPECT_NE(text.find("aaa_from_collector 7\n"), std::string::npos);
  expect_throw_naming<std::invalid_argument>([&] { r.gauge("aaa_from_collector", "G."); },
                                             "'aaa_from_collector'");
  expect_throw_naming<std::invalid_argument>(
      [&] { r.add_collector(std::make_shared<FixedCollector>()); }, "'aaa_from_collector'");
}

}  // namespace
}  // namespace ddp3d::metrics
