// Golden-string tests of the Prometheus text format writer: exact bytes matter, because
// Prometheus parses them.
#include "common/metrics/exposition.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "common/metrics/registry.h"

namespace ddp3d::metrics {
namespace {

TEST(FormatValue, SpecialsUsePrometheusSpelling) {
  EXPECT_EQ(format_value(std::numeric_limits<double>::quiet_NaN()), "NaN");
  EXPECT_EQ(format_value(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(format_value(-std::numeric_limits<double>::infinity()), "-Inf");
}

TEST(FormatValue, ShortestRoundTrip) {
  EXPECT_EQ(format_value(0), "0");
  EXPECT_EQ(format_value(3), "3");
  EXPECT_EQ(format_value(-2.5), "-2.5");
  EXPECT_EQ(format_value(0.1), "0.1");
  EXPECT_EQ(format_value(1e21), "1e+21");
  EXPECT_EQ(format_value(1.5e-7), "1.5e-07");
  const double third = 1.0 / 3.0;
  EXPECT_EQ(std::stod(format_value(third)), third);
}

TEST(Escaping, HelpEscapesBackslashAndNewlineOnly) {
  EXPECT_EQ(escape_help("a\\b\nc\"d"), "a\\\\b\\nc\"d");
}

TEST(Escaping, LabelValueEscapesBackslashQuoteNewline) {
  EXPECT_EQ(escape_label_value("a\\b\nc\"d"), "a\\\\b\\nc\\\"d");
}

TEST(Escaping, InvalidUtf8BecomesReplacementCharacter) {
  const std::string fffd = "\xEF\xBF\xBD";
  // Valid multi-byte text passes through untouched.
  EXPECT_EQ(escape_label_value("größe ✓ 😀"), "größe ✓ 😀");
  EXPECT_EQ(escape_label_value("a\xff\\b"), "a" + fffd + "\\\\b");
  EXPECT_EQ(escape_help("x\xc3"), "x" + fffd);                        // truncated sequence
  EXPECT_EQ(escape_label_value("\xc0\xaf"), fffd + fffd);             // overlong '/'
  EXPECT_EQ(escape_label_value("\xed\xa0\x80"), fffd + fffd + fffd);  // surrogate
  EXPECT_EQ(escape_label_value("\xf4\x90\x80\x80"), fffd + fffd + fffd + fffd);  // > U+10FFFF
}

TEST(WriteText, CounterGaugeWithEscapedHelpAndLabels) {
  Registry r;
  auto& c = r.counter("ddp3d_req_total", "Requests.\nSecond line \\ here.", {"code", "path"});
  c.labels({"200", "/b"}).inc(2);
  c.labels({"200", "/a"}).inc();
  c.labels({"404", "/x\"y\\z\nw"}).inc(0.5);
  r.gauge("ddp3d_lr", "Learning rate.").set(0.001);
  EXPECT_EQ(r.expose(),
            "# HELP ddp3d_lr Learning rate.\n"
            "# TYPE ddp3d_lr gauge\n"
            "ddp3d_lr 0.001\n"
            "# HELP ddp3d_req_total Requests.\\nSecond line \\\\ here.\n"
            "# TYPE ddp3d_req_total counter\n"
            "ddp3d_req_total{code=\"200\",path=\"/a\"} 1\n"
            "ddp3d_req_total{code=\"200\",path=\"/b\"} 2\n"
            "ddp3d_req_total{code=\"404\",path=\"/x\\\"y\\\\z\\nw\"} 0.5\n");
}

TEST(WriteText, HistogramBucketsAreCumulativeWithInfSumCount) {
  Registry r;
  auto& h = r.histogram("ddp3d_step_seconds", "Step time.", {0.25, 1, 10});
  // Exactly representable values, so the sum is exact; 0.25 sits on a bound (le is inclusive).
  for (double v : {0.125, 0.25, 0.5, 2.0, 20.0, 30.0}) h.observe(v);
  EXPECT_EQ(r.expose(),
            "# HELP ddp3d_step_seconds Step time.\n"
            "# TYPE ddp3d_step_seconds histogram\n"
            "ddp3d_step_seconds_bucket{le=\"0.25\"} 2\n"
            "ddp3d_step_seconds_bucket{le=\"1\"} 3\n"
            "ddp3d_step_seconds_bucket{le=\"10\"} 4\n"
            "ddp3d_step_seconds_bucket{le=\"+Inf\"} 6\n"
            "ddp3d_step_seconds_sum 52.875\n"
            "ddp3d_step_seconds_count 6\n");
}

TEST(WriteText, LabelledHistogramPutsLeLastAndOrdersSeriesByLabelValues) {
  Registry r;
  auto& h = r.histogram("ddp3d_phase_seconds", "Phase time.", {1}, {"phase"});
  h.labels({"data"}).observe(2);
  h.labels({"backward"}).observe(0.5);
  EXPECT_EQ(r.expose(),
            "# HELP ddp3d_phase_seconds Phase time.\n"
            "# TYPE ddp3d_phase_seconds histogram\n"
            "ddp3d_phase_seconds_bucket{phase=\"backward\",le=\"1\"} 1\n"
            "ddp3d_phase_seconds_bucket{phase=\"backward\",le=\"+Inf\"} 1\n"
            "ddp3d_phase_seconds_sum{phase=\"backward\"} 0.5\n"
            "ddp3d_phase_seconds_count{phase=\"backward\"} 1\n"
            "ddp3d_phase_seconds_bucket{phase=\"data\",le=\"1\"} 0\n"
            "ddp3d_phase_seconds_bucket{phase=\"data\",le=\"+Inf\"} 1\n"
            "ddp3d_phase_seconds_sum{phase=\"data\"} 2\n"
            "ddp3d_phase_seconds_count{phase=\"data\"} 1\n");
}

TEST(WriteText, GaugeSpecialValues) {
  Registry r;
  auto& g = r.gauge("ddp3d_g", "G.", {"k"});
  g.labels({"nan"}).set(std::numeric_limits<double>::quiet_NaN());
  g.labels({"pinf"}).set(std::numeric_limits<double>::infinity());
  g.labels({"ninf"}).set(-std::numeric_limits<double>::infinity());
  EXPECT_EQ(r.expose(),
            "# HELP ddp3d_g G.\n"
            "# TYPE ddp3d_g gauge\n"
            "ddp3d_g{k=\"nan\"} NaN\n"
            "ddp3d_g{k=\"ninf\"} -Inf\n"
            "ddp3d_g{k=\"pinf\"} +Inf\n");
}

TEST(WriteText, OutputOrderDoesNotDependOnRegistrationOrder) {
  Registry a;
  a.gauge("b_metric", "B.").set(1);
  a.gauge("a_metric", "A.").set(2);
  Registry b;
  b.gauge("a_metric", "A.").set(2);
  b.gauge("b_metric", "B.").set(1);
  EXPECT_EQ(a.expose(), b.expose());
  EXPECT_LT(a.expose().find("a_metric"), a.expose().find("b_metric"));
}

TEST(WriteText, LabelledFamilyWithoutSeriesIsOmitted) {
  Registry r;
  r.counter("ddp3d_unused_total", "Never used.", {"x"});
  r.counter("ddp3d_used_total", "Used, no labels.");
  EXPECT_EQ(r.expose(),
            "# HELP ddp3d_used_total Used, no labels.\n"
            "# TYPE ddp3d_used_total counter\n"
            "ddp3d_used_total 0\n");
}

}  // namespace
}  // namespace ddp3d::metrics
