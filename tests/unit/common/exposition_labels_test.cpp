// The exposition label parser behind the binaries' "no label collides with a target label"
// tests: it must see every label name, escaped values included, flag the target labels and
// "__" names, and reject what it cannot read rather than pass it.
#include "tests/unit/common/exposition_labels.h"

#include <gtest/gtest.h>
#include <prometheus/counter.h>
#include <prometheus/histogram.h>

#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/metrics/collection.h"
#include "common/metrics/process_collector.h"

namespace ddp3d::metrics {
namespace {

using test::label_names;
using test::scrape_label_collisions;

TEST(ExpositionLabels, SeesEveryLabelOfEveryLineEscapesIncluded) {
  Collection c;
  c.add(std::make_shared<ProcessCollector>());
  auto& errors =
      prometheus::BuildCounter().Name("ddp3d_test_errors_total").Help("E.").Register(c.registry());
  errors.Add({{"kind", R"(a "quoted" \ value, with} braces="x")"}, {"rank", "0"}}).Increment();
  errors.Add({{"kind", "multi\nline"}, {"trainingjob", "pp"}}).Increment();
  prometheus::BuildHistogram()
      .Name("ddp3d_test_seconds")
      .Help("S.")
      .Register(c.registry())
      .Add({{"phase", "fwd"}}, std::vector<double>{1, 2})
      .Observe(1.5);
  const auto names = label_names(c.text());
  EXPECT_EQ(names.at("ddp3d_test_errors_total"),
            (std::set<std::string>{"kind", "rank", "trainingjob"}));
  EXPECT_EQ(names.at("ddp3d_test_seconds_bucket"), (std::set<std::string>{"le", "phase"}));
  EXPECT_EQ(names.at("ddp3d_test_seconds_sum"), (std::set<std::string>{"phase"}));
  EXPECT_TRUE(names.at("process_open_fds").empty());
  EXPECT_TRUE(scrape_label_collisions(c.text()).empty());
}

TEST(ExpositionLabels, FlagsTargetLabelsAndReservedNames) {
  const std::string text =
      "# HELP a_total A.\n"
      "# TYPE a_total counter\n"
      "a_total{namespace=\"ml\",job=\"pp\",trainingjob=\"pp\"} 1\n"
      "b{__tenant=\"x\"} 2\n"
      "c{instance=\"i\",pod=\"p\",container=\"c\",service=\"s\",endpoint=\"e\",node=\"n\"} 3\n"
      "d{job_name=\"pp\",node_rank=\"0\",exported_job=\"x\"} 4\n";
  EXPECT_EQ(
      scrape_label_collisions(text),
      (std::vector<std::string>{"a_total{job}", "a_total{namespace}", "b{__tenant}", "c{container}",
                                "c{endpoint}", "c{instance}", "c{node}", "c{pod}", "c{service}"}));
}

TEST(ExpositionLabels, RejectsLinesItCannotRead) {
  for (const char* line : {"{job=\"x\"} 1\n", "a{job} 1\n", "a{job=\"x} 1\n", "a{job=\"x\" 1\n",
                           "a{=\"x\"} 1\n", "a\n"}) {
    EXPECT_THROW(label_names(line), std::invalid_argument) << line;
  }
}

}  // namespace
}  // namespace ddp3d::metrics
