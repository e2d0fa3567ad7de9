// Prometheus' own checker must accept what we serve: `promtool check metrics` (Debian
// package prometheus, installed by tools/setup.sh) parses the text format strictly and lints
// names. Missing promtool is a failure, not a skip: this is the only proof from outside. The
// binaries' own families are checked the same way in train_telemetry_test (worker) and
// operator_metrics_test (operator).
#include "tests/unit/common/promtool.h"

#include <gtest/gtest.h>
#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>

#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "common/metrics/collection.h"
#include "common/metrics/process_collector.h"

namespace ddp3d::metrics {
namespace {

using test::find_promtool;
using test::promtool_check;
using test::PromtoolRun;

// A registry with every metric kind, labels needing escapes, special values and the process
// collector: everything the writer can produce.
std::string full_exposition() {
  Collection c;
  c.add(std::make_shared<ProcessCollector>());
  prometheus::Registry& r = c.registry();
  prometheus::BuildCounter()
      .Name("ddp3d_test_steps_total")
      .Help("Optimizer steps.")
      .Register(r)
      .Add({})
      .Increment(42);
  auto& errors = prometheus::BuildCounter()
                     .Name("ddp3d_test_errors_total")
                     .Help("Errors by kind.\nSecond \\ line.")
                     .Register(r);
  errors.Add({{"kind", "nccl \"timeout\""}, {"rank", "0"}}).Increment();
  errors.Add({{"kind", "path\\with\nnewline"}, {"rank", "1"}}).Increment(2.5);
  errors.Add({{"kind", "good: größe ✓"}, {"rank", "2"}}).Increment();
  prometheus::BuildGauge()
      .Name("ddp3d_test_learning_rate")
      .Help("Learning rate.")
      .Register(r)
      .Add({})
      .Set(1.5e-4);
  auto& special =
      prometheus::BuildGauge().Name("ddp3d_test_special").Help("Special values.").Register(r);
  special.Add({{"which", "nan"}}).Set(std::numeric_limits<double>::quiet_NaN());
  special.Add({{"which", "inf"}}).Set(std::numeric_limits<double>::infinity());
  special.Add({{"which", "neg_inf"}}).Set(-std::numeric_limits<double>::infinity());
  special.Add({{"which", ""}});
  auto& step = prometheus::BuildHistogram()
                   .Name("ddp3d_test_step_seconds")
                   .Help("Step time.")
                   .Register(r)
                   .Add({}, std::vector<double>{0.005, 0.01, 0.1, 1, 10});
  step.Observe(0.2);
  step.Observe(3);
  auto& phase =
      prometheus::BuildHistogram().Name("ddp3d_test_phase_seconds").Help("Phase time.").Register(r);
  phase.Add({{"phase", "forward"}}, exponential_buckets(0.001, 10, 5)).Observe(0.05);
  phase.Add({{"phase", "backward"}}, exponential_buckets(0.001, 10, 5))
      .Observe(std::numeric_limits<double>::infinity());
  return c.text();
}

TEST(Promtool, AcceptsEveryMetricKind) {
  const std::string promtool = find_promtool();
  ASSERT_FALSE(promtool.empty())
      << "promtool not found on PATH (Debian package 'prometheus'; run tools/setup.sh)";
  const std::string text = full_exposition();
  for (const char* must : {"# TYPE process_cpu_seconds_total counter",
                           "# TYPE ddp3d_test_step_seconds histogram", "le=\"+Inf\"",
                           // prometheus-cpp's spelling; Prometheus parses it case-insensitively.
                           "} Nan\n"}) {
    ASSERT_NE(text.find(must), std::string::npos) << must << " in:\n" << text;
  }
  const PromtoolRun run = promtool_check(promtool, text);
  EXPECT_EQ(run.exit_code, 0) << "promtool said:\n" << run.output << "\non:\n" << text;
  EXPECT_TRUE(run.output.empty()) << run.output;
}

// The check is real: promtool must reject what Prometheus would reject, so a pass above
// means something.
TEST(Promtool, RejectsBrokenExposition) {
  const std::string promtool = find_promtool();
  ASSERT_FALSE(promtool.empty()) << "promtool not found on PATH";
  const PromtoolRun bad_value = promtool_check(promtool, "# TYPE x gauge\nx not_a_number\n");
  EXPECT_NE(bad_value.exit_code, 0) << bad_value.output;
  const PromtoolRun bad_escape = promtool_check(promtool, "# TYPE y gauge\ny{l=\"a\nb\"} 1\n");
  EXPECT_NE(bad_escape.exit_code, 0) << bad_escape.output;
  const PromtoolRun lint =
      promtool_check(promtool, "# HELP z_count Z.\n# TYPE z_count counter\nz_count 1\n");
  EXPECT_NE(lint.exit_code, 0) << lint.output;
}

}  // namespace
}  // namespace ddp3d::metrics
