#include "worker/engine/run_summary.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace ddp3d::engine {
namespace {

// The KITTI keys of one class at both overlaps; strict values 10 × loose ones' order.
MetricMap kitti_car(double moderate_3d) {
  MetricMap m;
  const char* diffs[] = {"easy", "moderate", "hard"};
  for (int d = 0; d < 3; ++d) {
    const std::string diff = diffs[d];
    m["KITTI/Car_3D_AP40_" + diff + "_strict"] = d == 1 ? moderate_3d : 70.0 + d;
    m["KITTI/Car_3D_AP40_" + diff + "_loose"] = 90.0 + d;
    m["KITTI/Car_BEV_AP40_" + diff + "_strict"] = 80.0 + d;
    m["KITTI/Car_BEV_AP40_" + diff + "_loose"] = 95.0 + d;
    m["KITTI/Car_AOS_AP40_" + diff + "_strict"] = d == 2 ? NAN : 60.5 + d;
    m["KITTI/Car_3D_AP11_" + diff + "_strict"] = 11.0;
  }
  m["KITTI/num_detections"] = 42;
  return m;
}

TEST(RunSummary, BestValidationByRuleSkippingNaNAndMissing) {
  const std::vector<ValidationRecord> v = {
      {1, 10, {{"ap", 50}, {"mse", 0.5}}}, {2, 20, {{"ap", NAN}, {"mse", 0.2}}},
      {3, 30, {{"ap", 70}, {"mse", 0.2}}}, {4, 40, {{"mse", 0.3}}},
      {5, 50, {{"ap", 70}, {"mse", 0.9}}},
  };
  EXPECT_EQ(best_validation(v, {"ap", true}), 2U);    // NaN skipped, the earlier of two 70s
  EXPECT_EQ(best_validation(v, {"mse", false}), 1U);  // lower is better, earliest of equals
  EXPECT_EQ(best_validation(v, {"missing", true}), std::nullopt);
  EXPECT_EQ(best_validation({}, {"ap", true}), std::nullopt);
  const std::vector<ValidationRecord> negative = {{1, 1, {{"x", -5}}}, {2, 2, {{"x", -3}}}};
  EXPECT_EQ(best_validation(negative, {"x", true}), 1U);
  EXPECT_EQ(best_validation(negative, {"x", false}), 0U);
}

TEST(RunSummary, ApTableShowsStrictAp40PerDifficultyAndDashesForNaN) {
  const std::vector<std::string> table = format_ap_table(kitti_car(65.4321));
  ASSERT_EQ(table.size(), 4U);
  EXPECT_EQ(table[0], "AP40 (strict)      easy  moderate      hard");
  EXPECT_EQ(table[1], "Car 3D            70.00     65.43     72.00");
  EXPECT_EQ(table[2], "Car BEV           80.00     81.00     82.00");
  EXPECT_EQ(table[3], "Car AOS           60.50     61.50         -");
}

TEST(RunSummary, ApTableOrdersClassMeansLastAndFallsBackToAp11) {
  MetricMap m;
  for (const char* cls : {"Pedestrian", "Car", "Big_Truck"}) {
    for (const char* d : {"easy", "moderate", "hard"})
      m[std::string("KITTI/") + cls + "_3D_AP11_" + d + "_strict"] = 1.0;
  }
  for (const char* d : {"easy", "moderate", "hard"})
    m[std::string("KITTI/Overall_3D_AP11_") + d] = 2.0;
  const std::vector<std::string> table = format_ap_table(m);
  ASSERT_EQ(table.size(), 5U);
  EXPECT_EQ(table[0].substr(0, 13), "AP11 (strict)");
  EXPECT_EQ(table[1].substr(0, 12), "Big_Truck 3D");
  EXPECT_EQ(table[2].substr(0, 6), "Car 3D");
  EXPECT_EQ(table[3].substr(0, 13), "Pedestrian 3D");
  EXPECT_EQ(table[4].substr(0, 10), "Overall 3D");
  EXPECT_NE(table[4].find("2.00"), std::string::npos);
  // Not KITTI's names, or half of one: no table.
  EXPECT_TRUE(format_ap_table({{"mse", 1}, {"KITTI/Car_3D", 1}, {"KITTI/_moderate", 1}}).empty());
}

TEST(RunSummary, TrainHeadlineNamesTheBestEpochAndTheLastValue) {
  RunSummary s;
  s.wall_seconds = 125;
  s.samples = 1000;
  s.epochs = 3;
  s.iters = 30;
  s.validations = {{1, 10, kitti_car(40)}, {2, 20, kitti_car(65.4321)}, {3, 30, kitti_car(60)}};
  s.key = KeyMetric{"KITTI/Car_3D_AP40_moderate_strict", true};
  const std::vector<std::string> lines = format_run_summary(s);
  ASSERT_EQ(lines.size(), 5U);
  EXPECT_EQ(lines[0],
            "Summary: train finished at epoch 3, iteration 30; 1000 samples in 0:02:05 "
            "(8.0 samples/s); best epoch 2: KITTI/Car_3D_AP40_moderate_strict 65.4321 "
            "(last: 60.0000)");
  EXPECT_EQ(lines[2], "  Car 3D            70.00     65.43     72.00");  // the best epoch's

  const std::string json = format_run_summary_json(s);
  EXPECT_NE(json.find("\"best\": {\"epoch\": 2, \"iter\": 20, \"value\": 65.432100000000005}"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"samples_per_s\": 8,"), std::string::npos) << json;
  EXPECT_NE(json.find("\"KITTI/Car_AOS_AP40_hard_strict\": null"), std::string::npos) << json;
}

TEST(RunSummary, StoppedRunsRunsWithoutValidationAndOtherMetrics) {
  RunSummary s;
  s.wall_seconds = 0;  // no division by zero
  s.samples = 8;
  s.epochs = 0;
  s.iters = 4;
  s.stopped = "SIGTERM";
  const std::vector<std::string> lines = format_run_summary(s);
  ASSERT_EQ(lines.size(), 1U);
  EXPECT_EQ(lines[0],
            "Summary: train stopped (SIGTERM) at epoch 0, iteration 4; 8 samples in 0.0 s "
            "(0.0 samples/s); no validation ran");
  EXPECT_NE(format_run_summary_json(s).find("\"stopped\": \"SIGTERM\", \"key_metric\": null, "
                                            "\"best\": null, \"metrics\": {}"),
            std::string::npos);

  RunSummary t;
  t.mode = "test";
  t.wall_seconds = 2;
  t.samples = 64;
  t.metrics = {{"mae", 0.25}, {"mse", 0.0625}};
  const std::vector<std::string> test = format_run_summary(t);
  ASSERT_EQ(test.size(), 2U);
  EXPECT_EQ(test[0], "Summary: test 64 samples in 2.0 s (32.0 samples/s)");
  EXPECT_EQ(test[1], "  metrics:  mae 0.25  mse 0.0625");
}

TEST(RunSummary, HostileNamesStayValidJson) {
  RunSummary s;
  s.stopped = std::string("a \"quoted\"\nreason\\");
  const std::string json = format_run_summary_json(s);
  EXPECT_NE(json.find(R"("stopped": "a \"quoted\"\u000areason\\")"), std::string::npos) << json;
}

}  // namespace
}  // namespace ddp3d::engine
