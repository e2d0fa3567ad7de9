#include "operator/controller/progress_metrics.h"

#include <gtest/gtest.h>

#include <string>

namespace ddp3d::op::controller {
namespace {

TEST(ProgressMetrics, ReadsTheThreeSeriesAndNothingElse) {
  const auto m = parse_progress_metrics(
      "# HELP ddp3d_train_steps_total Optimizer steps done.\n"
      "# TYPE ddp3d_train_steps_total counter\n"
      "ddp3d_train_steps_total 1234\n"
      "ddp3d_train_steps_total_created 1.7e9\n"
      "ddp3d_train_epoch{rank=\"0\"} 3\n"
      "ddp3d_train_max_steps 37120 1796033609000\n"
      "ddp3d_train_loss 0.5\n");
  EXPECT_EQ(m.steps, 1234.0);
  EXPECT_EQ(m.epoch, 3.0);
  EXPECT_EQ(m.max_steps, 37120.0) << "a trailing timestamp is allowed";
}

TEST(ProgressMetrics, AbsentSeriesStayAbsent) {
  const auto m = parse_progress_metrics("ddp3d_train_steps_total 10\n");
  EXPECT_EQ(m.steps, 10.0);
  EXPECT_FALSE(m.epoch);
  EXPECT_FALSE(m.max_steps) << "old workers have no max steps: no ETA, not 0";
  EXPECT_EQ(parse_progress_metrics(""), ProgressMetrics{});
}

TEST(ProgressMetrics, NonFiniteNegativeAndGarbageValuesAreNotTaken) {
  for (const char* bad :
       {"NaN", "+Inf", "-Inf", "-1", "1e400", "12abc", "", "0x10", "1e16", "--1", "inf"}) {
    const auto m = parse_progress_metrics(std::string("ddp3d_train_steps_total ") + bad + "\n");
    EXPECT_FALSE(m.steps) << bad;
  }
  // A bad sample does not hide a good one that follows.
  EXPECT_EQ(
      parse_progress_metrics("ddp3d_train_steps_total NaN\nddp3d_train_steps_total 7\n").steps,
      7.0);
  EXPECT_EQ(parse_progress_metrics("ddp3d_train_steps_total +5\n").steps, 5.0);
  EXPECT_EQ(parse_progress_metrics("ddp3d_train_steps_total 2.5e3\n").steps, 2500.0);
}

TEST(ProgressMetrics, LabelValuesWithEscapesAndBracesDoNotConfuseIt) {
  const auto m = parse_progress_metrics(
      "ddp3d_train_steps_total{job=\"a\\\"} ddp3d_train_epoch 99\",x=\"}\\\\\",} 42\n"
      "ddp3d_train_epoch{path=\"c:\\\\dir\\n\"} 2\n");
  EXPECT_EQ(m.steps, 42.0);
  EXPECT_EQ(m.epoch, 2.0);
}

TEST(ProgressMetrics, MalformedLinesAreSkipped) {
  const auto m = parse_progress_metrics(
      "ddp3d_train_steps_total{job=\"unterminated} 5\n"
      "ddp3d_train_steps_total{=\"x\"} 6\n"
      "ddp3d_train_steps_total{a=b} 7\n"
      "ddp3d_train_steps_total 8 notatimestamp\n"
      "ddp3d_train_steps_total 9 1 extra\n"
      "ddp3d_train_steps_total\n"
      "ddp3d_train_steps_totalx 10\n"
      "9ddp3d_train_steps_total 11\n"
      "ddp3d_train_steps_total{a=\"\\\n"
      "  ddp3d_train_steps_total\t12\r\n");
  EXPECT_EQ(m.steps, 12.0) << "leading blanks, a tab separator and CRLF are fine";
}

TEST(ProgressMetrics, HugeLinesAndBinaryAreHandledLinearly) {
  std::string body(2 << 20, 'x');  // one 2 MiB line of garbage
  body += "\n";
  body += "ddp3d_train_steps_total{l=\"" + std::string(1 << 20, '\\') + "\"} 3\n";
  body += std::string("\0\xff\x01 ddp3d_train_epoch 4\n", 24);
  body += "ddp3d_train_epoch 5";  // no final newline
  const auto m = parse_progress_metrics(body);
  EXPECT_EQ(m.steps, 3.0) << "an even run of backslashes is a run of escaped backslashes";
  EXPECT_EQ(m.epoch, 5.0);
}

}  // namespace
}  // namespace ddp3d::op::controller
