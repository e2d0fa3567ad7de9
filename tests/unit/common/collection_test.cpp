// metrics::Collection: prometheus-cpp's registry plus scrape-time sources, exposed as one
// sorted text body. What is ours to test: the merge (order, empty families left out), the
// name-clash checks and the bucket helper; the format itself is prometheus-cpp's (and
// promtool_test checks it from outside).
#include "common/metrics/collection.h"

#include <gtest/gtest.h>
#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/metric_family.h>

#include <atomic>
#include <cmath>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace ddp3d::metrics {
namespace {

class FixedSource : public prometheus::Collectable {
 public:
  explicit FixedSource(std::vector<std::string> names) : names_(std::move(names)) {}
  std::vector<prometheus::MetricFamily> Collect() const override {
    std::vector<prometheus::MetricFamily> out;
    for (const auto& n : names_) {
      prometheus::ClientMetric m;
      m.gauge.value = 7;
      out.push_back({n, "Fixed.", prometheus::MetricType::Gauge, {m}});
    }
    return out;
  }

 private:
  std::vector<std::string> names_;
};

std::vector<std::string> names(const Collection& c) {
  std::vector<std::string> out;
  for (const auto& f : c.collect()) out.push_back(f.name);
  return out;
}

TEST(Collection, RegistryAndSourcesMergeSortedByName) {
  Collection c;
  prometheus::BuildCounter().Name("b_total").Help("B.").Register(c.registry()).Add({}).Increment();
  c.add(std::make_shared<FixedSource>(std::vector<std::string>{"c_gauge", "a_gauge"}));
  EXPECT_EQ(names(c), (std::vector<std::string>{"a_gauge", "b_total", "c_gauge"}));
  const std::string text = c.text();
  EXPECT_LT(text.find("a_gauge 7"), text.find("b_total 1"));
  EXPECT_LT(text.find("b_total 1"), text.find("c_gauge 7"));
}

TEST(Collection, AFamilyWithoutSeriesIsLeftOut) {
  Collection c;
  auto& loss = prometheus::BuildGauge().Name("loss").Help("Loss.").Register(c.registry());
  EXPECT_EQ(c.text().find("loss"), std::string::npos) << c.text();
  loss.Add({{"rank", "0"}}).Set(0.5);
  EXPECT_NE(c.text().find("loss{rank=\"0\"} 0.5"), std::string::npos) << c.text();
}

TEST(Collection, HelpTextIsEscaped) {
  Collection c;
  prometheus::BuildGauge().Name("h").Help("a\\b\nc\"d").Register(c.registry()).Add({});
  EXPECT_NE(c.text().find("# HELP h a\\\\b\\nc\"d\n"), std::string::npos) << c.text();
}

TEST(Collection, ANameTakenTwiceIsRefusedWithTheName) {
  Collection c;
  prometheus::BuildGauge().Name("x").Help("X.").Register(c.registry()).Add({});
  // The same name for another type in the registry.
  EXPECT_THROW(prometheus::BuildCounter().Name("x").Help("X.").Register(c.registry()),
               std::invalid_argument);
  // A source clashing with the registry, and with another source.
  try {
    c.add(std::make_shared<FixedSource>(std::vector<std::string>{"x"}));
    FAIL() << "clash accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("family x"), std::string::npos) << e.what();
  }
  c.add(std::make_shared<FixedSource>(std::vector<std::string>{"y"}));
  EXPECT_THROW(c.add(std::make_shared<FixedSource>(std::vector<std::string>{"y"})),
               std::invalid_argument);
  EXPECT_THROW(c.add(nullptr), std::invalid_argument);
  EXPECT_EQ(names(c), (std::vector<std::string>{"x", "y"}));  // the refused ones left no trace
}

TEST(Collection, ScrapesDuringUpdatesSeeExactTotalsAfterwards) {
  Collection c;
  auto& steps = prometheus::BuildCounter().Name("s_total").Help("S.").Register(c.registry());
  std::atomic<bool> done{false};
  std::thread scraper([&] {
    while (!done) (void)c.text();
  });
  std::vector<std::thread> ranks;
  for (int r = 0; r < 4; ++r) {
    ranks.emplace_back([&, r] {
      auto& mine = steps.Add({{"rank", std::to_string(r)}});
      for (int i = 0; i < 20000; ++i) mine.Increment();
    });
  }
  for (auto& t : ranks) t.join();
  done = true;
  scraper.join();
  const std::string text = c.text();
  for (int r = 0; r < 4; ++r) {
    EXPECT_NE(text.find("s_total{rank=\"" + std::to_string(r) + "\"} 20000"), std::string::npos)
        << text;
  }
}

TEST(ExponentialBuckets, ValuesAndValidation) {
  EXPECT_EQ(exponential_buckets(0.5, 2, 4), (std::vector<double>{0.5, 1, 2, 4}));
  EXPECT_THROW(exponential_buckets(0, 2, 4), std::invalid_argument);
  EXPECT_THROW(exponential_buckets(1, 1, 4), std::invalid_argument);
  EXPECT_THROW(exponential_buckets(1, 2, 0), std::invalid_argument);
  EXPECT_THROW(exponential_buckets(std::nan(""), 2, 3), std::invalid_argument);
}

}  // namespace
}  // namespace ddp3d::metrics
