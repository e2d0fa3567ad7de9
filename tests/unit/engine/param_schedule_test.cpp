#include "worker/engine/param_schedule.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "worker/engine/schedule_rules.h"

namespace ddp3d::engine {
namespace {

// References: PyTorch 2.15's chainable schedulers (the recurrences mmengine uses), computed once
// with the venv's Python:
//   cyclic: SGD(lr=base); CosineAnnealingLR(T_max=2*ipe, eta_min=eta1) stepped while g < 2*ipe,
//   then a second CosineAnnealingLR(T_max=3*ipe, eta_min=eta2) created at g = 2*ipe and stepped
//   while g < 5*ipe (ipe = 5); lr read after each g. Momentum: the same recurrence on 0.95.
//   toy: SGD(lr=0.05); LinearLR(start_factor=0.1, total_iters=19) stepped while g < 20 and
//   StepLR(step_size=3, gamma=0.5) stepped when g % 32 == 0.
SchedulePhase cosine(ScheduledParam param, double t_max, double eta_min, double begin, double end) {
  SchedulePhase p;
  p.rule = std::make_shared<CosineAnnealingRule>(t_max, eta_min);
  p.param = param;
  p.by_epoch = true;
  p.convert_to_iter_based = true;
  p.begin = begin;
  p.end = end;
  return p;
}

TEST(ParamSchedule, CyclicCosineLrAndMomentumMatchPyTorch) {
  // mmdet3d's cyclic-40e shape, shortened to 2 + 3 epochs of 5 iterations.
  const ParamSchedule s(
      {cosine(ScheduledParam::kLr, 2, 0.018, 0, 2), cosine(ScheduledParam::kLr, 3, 1.8e-7, 2, 5),
       cosine(ScheduledParam::kMomentum, 2, 0.8947368421052632, 0, 2),
       cosine(ScheduledParam::kMomentum, 3, 1.0, 2, 5)},
      5);
  const std::vector<std::pair<int, double>> lr = {{0, 0.0018},
                                                  {1, 0.0021964422180092563},
                                                  {4, 0.0073969623455629255},
                                                  {9, 0.017603557781990742},
                                                  {10, 0.017603557781990742},
                                                  {11, 0.017411219762127884},
                                                  {17, 0.009721895904931097},
                                                  {24, 0.0001925180198628579},
                                                  {27, 0.0001925180198628579}};
  for (const auto& [iter, want] : lr) {
    EXPECT_NEAR(s.value(ScheduledParam::kLr, 0.0018, iter), want, 1e-15) << "iter " << iter;
  }
  const std::vector<std::pair<int, double>> mom = {{0, 0.95},
                                                   {1, 0.9486476142660503},
                                                   {4, 0.9309070485287814},
                                                   {9, 0.8960892278392129},
                                                   {11, 0.8972245776798708},
                                                   {17, 0.9426137972541453},
                                                   {25, 0.998864650159342}};
  for (const auto& [iter, want] : mom) {
    EXPECT_NEAR(s.value(ScheduledParam::kMomentum, 0.95, iter), want, 1e-15) << "iter " << iter;
  }
}

TEST(ParamSchedule, OverlappingLinearWarmupAndEpochStepMatchPyTorch) {
  // configs/toy/toy_regression_2proc.yaml's schedule at 32 iterations per epoch.
  SchedulePhase warmup;
  warmup.rule = std::make_shared<LinearRule>(0.1, 1.0);
  warmup.by_epoch = false;
  warmup.begin = 0;
  warmup.end = 20;
  SchedulePhase step;
  step.rule = std::make_shared<StepRule>(3, 0.5);
  const ParamSchedule s({warmup, step}, 32);
  const std::vector<std::pair<int, double>> want = {
      {0, 0.005000000000000001}, {1, 0.00736842105263158},   {10, 0.028684210526315798},
      {19, 0.05000000000000002}, {20, 0.05000000000000002},  {95, 0.05000000000000002},
      {96, 0.02500000000000001}, {100, 0.02500000000000001}, {191, 0.02500000000000001}};
  for (const auto& [iter, v] : want) {
    EXPECT_NEAR(s.value(ScheduledParam::kLr, 0.05, iter), v, 1e-15) << "iter " << iter;
  }
  EXPECT_FALSE(s.schedules(ScheduledParam::kMomentum));
}

TEST(ParamSchedule, RandomAccessEqualsSequentialQueries) {
  // Resume asks for an arbitrary iteration first; the answer must not depend on query order.
  const ParamSchedule a({cosine(ScheduledParam::kLr, 2, 0.018, 0, 2)}, 5);
  const ParamSchedule b({cosine(ScheduledParam::kLr, 2, 0.018, 0, 2)}, 5);
  for (int i = 0; i <= 7; ++i) a.value(ScheduledParam::kLr, 0.0018, i);
  EXPECT_DOUBLE_EQ(a.value(ScheduledParam::kLr, 0.0018, 7),
                   b.value(ScheduledParam::kLr, 0.0018, 7));
  EXPECT_DOUBLE_EQ(a.value(ScheduledParam::kLr, 0.0018, 3),
                   b.value(ScheduledParam::kLr, 0.0018, 3));
}

TEST(ParamSchedule, StepAndMultiStepHandComputed) {
  SchedulePhase step;
  step.rule = std::make_shared<StepRule>(2, 0.5);
  step.by_epoch = false;
  const ParamSchedule s({step}, 1);
  EXPECT_DOUBLE_EQ(s.value(ScheduledParam::kLr, 1.0, 0), 1.0);
  EXPECT_DOUBLE_EQ(s.value(ScheduledParam::kLr, 1.0, 1), 1.0);
  EXPECT_DOUBLE_EQ(s.value(ScheduledParam::kLr, 1.0, 2), 0.5);
  EXPECT_DOUBLE_EQ(s.value(ScheduledParam::kLr, 1.0, 5), 0.25);

  SchedulePhase multi;
  multi.rule = std::make_shared<MultiStepRule>(std::vector<double>{1, 3}, 0.1);
  multi.by_epoch = true;  // epoch-stepped: changes only at epoch boundaries
  const ParamSchedule m({multi}, 4);
  EXPECT_DOUBLE_EQ(m.value(ScheduledParam::kLr, 1.0, 3), 1.0);
  EXPECT_NEAR(m.value(ScheduledParam::kLr, 1.0, 4), 0.1, 1e-15);
  EXPECT_NEAR(m.value(ScheduledParam::kLr, 1.0, 11), 0.1, 1e-15);
  EXPECT_NEAR(m.value(ScheduledParam::kLr, 1.0, 12), 0.01, 1e-15);
}

TEST(ParamSchedule, RejectsAPhaseWithoutARule) {
  SchedulePhase p;
  p.name = "param_scheduler.2 (MyLR)";
  try {
    ParamSchedule({p}, 1);
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("param_scheduler.2 (MyLR): no schedule rule"),
              std::string::npos);
  }
}

TEST(ParamSchedule, RejectsEmptyRange) {
  SchedulePhase p = cosine(ScheduledParam::kLr, 1, 0, 3, 3);
  p.name = "param_scheduler.0 (CosineAnnealingLR)";
  try {
    ParamSchedule({p}, 1);
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("param_scheduler.0"), std::string::npos);
  }
}

}  // namespace
}  // namespace ddp3d::engine
