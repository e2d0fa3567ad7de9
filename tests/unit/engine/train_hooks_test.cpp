// The standard hooks, each alone against a fake loop (no DDP, no process group): the timer's
// data/iteration times, the schedule reaching the optimizer, the logger's window means and
// records, the telemetry's per-step records, and the checkpoint hook's schedule and
// bookkeeping.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/optim/optimizer.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "worker/components/builtin_components.h"
#include "worker/config/config.h"
#include "worker/engine/hook_registry.h"
#include "worker/engine/hooks/checkpoint_hook.h"
#include "worker/engine/hooks/ema_hook.h"
#include "worker/engine/hooks/invalid_loss_hook.h"
#include "worker/engine/hooks/iter_timer_hook.h"
#include "worker/engine/hooks/logger_hook.h"
#include "worker/engine/hooks/param_scheduler_hook.h"
#include "worker/engine/hooks/preemption_hook.h"
#include "worker/engine/hooks/telemetry_hook.h"
#include "worker/engine/schedule_rules.h"
#include "worker/engine/toy/toy_regressor.h"

namespace ddp3d::engine {
namespace {
namespace fs = std::filesystem;

// The loop as a hook sees it, with progress set by the test and checkpoint saves recorded.
class FakeLoop : public LoopContext {
 public:
  LoopProgress p;
  RunContext ctx;
  std::vector<fs::path> saved;
  const LoopProgress& progress() const override { return p; }
  const RunContext& run_context() const override { return ctx; }
  void request_stop(const std::string& reason) override { stop = reason; }
  std::optional<std::string> stop_reason() const override { return stop; }
  void save_checkpoint(const fs::path& path) override { saved.push_back(path); }
  std::optional<std::string> stop;
};

class HookTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("ddp3d_hooks_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::vector<std::string> lines(const fs::path& file) {
    std::ifstream in(file);
    std::vector<std::string> out;
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  }
  fs::path dir_;
};

IterTimerHook::Clock::time_point fake_now_value;
IterTimerHook::Clock::time_point fake_now() {
  return fake_now_value;
}
void advance_seconds(double s) {
  fake_now_value +=
      std::chrono::duration_cast<IterTimerHook::Clock::duration>(std::chrono::duration<double>(s));
}

TEST_F(HookTest, IterTimerMeasuresTheFetchAndTheWholeIteration) {
  FakeLoop loop;
  IterTimerHook timer(&fake_now);
  timer.before_train_epoch(loop);
  TrainIter first;
  advance_seconds(2);  // fetching the batch
  timer.before_train_iter(loop, first);
  advance_seconds(3);  // forward, backward, step
  timer.after_train_iter(loop, first);
  EXPECT_DOUBLE_EQ(first.data_seconds, 2);
  EXPECT_DOUBLE_EQ(first.iter_seconds, 5);
  TrainIter second;
  advance_seconds(0.5);
  timer.before_train_iter(loop, second);
  advance_seconds(1);
  timer.after_train_iter(loop, second);
  EXPECT_DOUBLE_EQ(second.data_seconds, 0.5);  // from the end of the first iteration
  EXPECT_DOUBLE_EQ(second.iter_seconds, 1.5);
}

// A model of one parameter, for an optimizer to hold.
class OneParameter : public Model {
 public:
  OneParameter() { register_parameter("w", at::ones({1})); }
  LossMap forward_train(const Batch& /*batch*/) override { return {}; }
  std::vector<Sample> predict(const Batch& /*batch*/) override { return {}; }
};

TEST_F(HookTest, ParamSchedulerSetsTheScheduledValuesOfEachGlobalIteration) {
  OneParameter model;
  OptimWrapperOptions o;
  o.optimizer.type = "SGD";
  o.optimizer.lr = 0.1;
  o.optimizer.momentum = 0.9;
  OptimWrapper optim(model, o);
  SchedulePhase warmup;
  warmup.rule = std::make_shared<LinearRule>(0.5, 1.0);
  warmup.by_epoch = false;
  warmup.begin = 0;
  warmup.end = 4;
  const ParamSchedule schedule({warmup}, 10);
  ParamSchedulerHook hook(schedule, optim);
  FakeLoop loop;
  TrainIter iter;
  for (std::int64_t i : {0, 2, 3, 7}) {
    loop.p.global_iter = i;
    hook.before_train_iter(loop, iter);
    EXPECT_DOUBLE_EQ(optim.lr(), schedule.value(ScheduledParam::kLr, 0.1, i)) << i;
    EXPECT_DOUBLE_EQ(optim.optimizer().param_groups()[0].options().get_lr(), optim.lr());
    EXPECT_DOUBLE_EQ(optim.momentum(), 0.9);  // not scheduled
  }
  EXPECT_DOUBLE_EQ(optim.lr(), 0.1);  // the warm-up is over
  loop.p.global_iter = 0;
  hook.before_train_iter(loop, iter);
  EXPECT_DOUBLE_EQ(optim.lr(), 0.05);
}

TrainIter iteration(double loss, double loss_b, double seconds, double data_seconds) {
  TrainIter it;
  it.lr = 0.01;
  it.momentum = 0.9;
  it.log_vars = {{"loss", loss}, {"loss_b", loss_b}};
  it.iter_seconds = seconds;
  it.data_seconds = data_seconds;
  return it;
}

TEST_F(HookTest, LoggerWritesWindowMeansEveryIntervalAndAtTheEpochEnd) {
  FakeLoop loop;
  loop.p.iters_per_epoch = 3;
  loop.p.max_epochs = 2;
  {
    TrainLog log(true, dir_ / "run", "x");
    LoggerHook logger(log, nullptr, 2);
    logger.before_train_epoch(loop);
    const double losses[] = {1.0, 3.0, 8.0};
    std::vector<std::optional<double>> published;
    for (std::int64_t i = 0; i < 3; ++i) {
      loop.p.iter_in_epoch = i;
      loop.p.global_iter = i;
      TrainIter it = iteration(losses[i], 10 * losses[i], 0.5 * static_cast<double>(i + 1), 0.1);
      logger.after_train_iter(loop, it);
      published.push_back(it.window_mean_loss);
    }
    EXPECT_FALSE(published[0].has_value());
    EXPECT_EQ(published[1], 2.0);  // (1 + 3) / 2
    EXPECT_EQ(published[2], 8.0);  // the epoch's last iteration, a window of one
    loop.p.epoch = 1;              // between epochs: the epochs done
    loop.p.global_iter = 3;
    logger.after_val(loop, ValResult{{{"mse", 0.25}}, 4});
  }
  const std::vector<std::string> records = lines(dir_ / "run" / "vis_data" / "scalars.json");
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0],
            "{\"lr\": 0.01, \"momentum\": 0.9, \"data_time\": 0.1, \"loss\": 2, \"loss_b\": 20, "
            "\"time\": 0.75, \"epoch\": 1, \"iter\": 2, \"step\": 2}");
  EXPECT_EQ(records[1],
            "{\"lr\": 0.01, \"momentum\": 0.9, \"data_time\": 0.1, \"loss\": 8, \"loss_b\": 80, "
            "\"time\": 1.5, \"epoch\": 1, \"iter\": 3, \"step\": 3}");
  EXPECT_EQ(records[2], "{\"mse\": 0.25, \"epoch\": 1, \"step\": 3}");
  bool val_line = false;
  for (const std::string& line : lines(dir_ / "run" / "x.log"))
    val_line |= line.find("Epoch(val) [1][4/4]") != std::string::npos;
  EXPECT_TRUE(val_line);
}

TEST_F(HookTest, LoggerWarnsOfASkippedFp16Step) {
  FakeLoop loop;
  loop.p.iters_per_epoch = 10;
  {
    TrainLog log(true, dir_ / "run", "x");
    LoggerHook logger(log, nullptr, 5);
    TrainIter it = iteration(1, 1, 0.1, 0.1);
    it.update.nonfinite_grads = true;
    it.update.loss_scale = 512;
    logger.after_train_iter(loop, it);
  }
  bool warned = false;
  for (const std::string& line : lines(dir_ / "run" / "x.log"))
    warned |= line.find("inf/NaN gradients, step skipped, loss scale now 512") != std::string::npos;
  EXPECT_TRUE(warned);
}

TEST_F(HookTest, LoggerRefusesAZeroInterval) {
  TrainLog log(false, dir_, "x");
  EXPECT_THROW(LoggerHook(log, nullptr, 0), std::invalid_argument);
}

class RecordingTelemetry : public TrainTelemetry {
 public:
  void on_start(std::int64_t planned_iters) override { planned.push_back(planned_iters); }
  void on_step(const StepRecord& step) override { steps.push_back(step); }
  void on_loss(double mean_loss) override { losses.push_back(mean_loss); }
  std::vector<StepRecord> steps;
  std::vector<double> losses;
  std::vector<std::int64_t> planned;
};

TEST_F(HookTest, TelemetryGetsEveryStepAndOnlyThePublishedWindowLoss) {
  FakeLoop loop;
  loop.p.epoch = 2;
  RecordingTelemetry telemetry;
  TelemetryHook hook(telemetry);
  Batch batch;
  batch.size = 6;
  TrainIter plain = iteration(1, 1, 0.25, 0);
  plain.batch = &batch;
  plain.update.allreduce_wait_s = 0.125;
  hook.after_train_iter(loop, plain);
  TrainIter logged = iteration(1, 1, 0.5, 0);
  logged.batch = &batch;
  logged.window_mean_loss = 0.75;
  hook.after_train_iter(loop, logged);
  ASSERT_EQ(telemetry.steps.size(), 2u);
  EXPECT_EQ(telemetry.steps[0].epoch, 3);  // 1-based, as in the logs
  EXPECT_EQ(telemetry.steps[0].samples, 6);
  EXPECT_DOUBLE_EQ(telemetry.steps[0].step_seconds, 0.25);
  EXPECT_DOUBLE_EQ(telemetry.steps[0].lr, 0.01);
  EXPECT_EQ(telemetry.steps[0].allreduce_seconds, 0.125);
  EXPECT_FALSE(telemetry.steps[1].allreduce_seconds.has_value());
  EXPECT_EQ(telemetry.losses, std::vector<double>{0.75});
}

TEST_F(HookTest, TelemetryIsToldTheIterationsLeftAfterAResume) {
  FakeLoop loop;
  loop.p.max_epochs = 4;
  loop.p.iters_per_epoch = 10;
  loop.p.global_iter = 13;  // resumed mid-epoch 2
  RecordingTelemetry telemetry;
  TelemetryHook hook(telemetry);
  hook.before_train(loop);
  EXPECT_EQ(telemetry.planned, std::vector<std::int64_t>{27});
}

CheckpointHookOptions checkpoint_options(const fs::path& dir, std::int64_t interval) {
  CheckpointHookOptions o;
  o.work_dir = dir;
  o.interval = interval;
  return o;
}

// Drives before_train_iter over iterations [from, to) of a loop with `ipe` iterations per
// epoch, then after_train_epoch at each epoch end, as the loop would (after_save_checkpoint
// follows every save, as the loop's save_checkpoint does).
void drive(CheckpointHook& hook, FakeLoop& loop, std::int64_t from, std::int64_t to) {
  auto saved_after = [&](std::size_t before) {
    if (loop.saved.size() > before) hook.after_save_checkpoint(loop, {loop.saved.back(), false});
  };
  loop.p.global_iter = from;
  hook.before_train(loop);
  for (std::int64_t it = from; it < to; ++it) {
    loop.p.global_iter = it;
    loop.p.epoch = it / loop.p.iters_per_epoch;
    TrainIter iter;
    const std::size_t before = loop.saved.size();
    hook.before_train_iter(loop, iter);
    saved_after(before);
    if ((it + 1) % loop.p.iters_per_epoch == 0) {
      loop.p.global_iter = it + 1;
      loop.p.epochs_completed = (it + 1) / loop.p.iters_per_epoch;
      const std::size_t b = loop.saved.size();
      hook.after_train_epoch(loop);
      saved_after(b);
    }
  }
}

TEST_F(HookTest, IterationCheckpointsAtEachIntervalAndAtTheEnd) {
  TrainLog log(false, dir_, "x");
  CheckpointHookOptions o = checkpoint_options(dir_, 4);
  o.by_epoch = false;
  CheckpointHook hook(o, log);
  FakeLoop loop;
  loop.p.max_epochs = 2;
  loop.p.iters_per_epoch = 6;
  drive(hook, loop, 0, 12);
  EXPECT_EQ(loop.saved, (std::vector<fs::path>{dir_ / "iter_4.pth", dir_ / "iter_8.pth",
                                               dir_ / "iter_12.pth"}));
  // Resumed at iteration 8 (its checkpoint is on disk): the next one is 12, the end.
  CheckpointHook resumed(o, log);
  FakeLoop again;
  again.p = loop.p;
  drive(resumed, again, 8, 12);
  EXPECT_EQ(again.saved, std::vector<fs::path>{dir_ / "iter_12.pth"});
}

TEST_F(HookTest, IterationCheckpointsWaitForAnUpdateBoundary) {
  TrainLog log(false, dir_, "x");
  CheckpointHookOptions o = checkpoint_options(dir_, 3);
  o.by_epoch = false;
  o.save_last = false;
  o.accumulative_counts = 2;  // boundaries at 0, 2, 4, ...
  CheckpointHook hook(o, log);
  FakeLoop loop;
  loop.p.max_epochs = 1;
  loop.p.iters_per_epoch = 10;
  drive(hook, loop, 0, 10);
  // Multiples 3, 6, 9 land on the boundaries 4, 6 and 10 (none: the run ends, no save_last).
  EXPECT_EQ(loop.saved, (std::vector<fs::path>{dir_ / "iter_4.pth", dir_ / "iter_6.pth"}));
}

TEST_F(HookTest, TimedCheckpointsFollowTheClockAndAnyRanksVote) {
  TrainLog log(false, dir_, "x");
  CheckpointHookOptions o = checkpoint_options(dir_, -1);
  o.save_last = false;
  o.interval_seconds = 10;
  double now = 0;
  bool peer_due = false;
  std::vector<bool> votes;
  CheckpointHook hook(
      o, log,
      [&](bool mine) {
        votes.push_back(mine);
        return mine || peer_due;
      },
      [&] { return now; });
  FakeLoop loop;
  loop.p.max_epochs = 1;
  loop.p.iters_per_epoch = 100;
  loop.p.global_iter = 0;
  hook.before_train(loop);
  auto boundary = [&](std::int64_t it, double t) {
    now = t;
    loop.p.global_iter = it;
    TrainIter iter;
    const std::size_t before = loop.saved.size();
    hook.before_train_iter(loop, iter);
    if (loop.saved.size() > before) hook.after_save_checkpoint(loop, {loop.saved.back(), false});
  };
  boundary(1, 5);   // 5 s: not yet
  boundary(2, 11);  // 11 s since the start: save
  boundary(3, 15);  // 4 s since that save: not yet
  peer_due = true;  // another rank's clock says it is time
  boundary(4, 16);
  peer_due = false;
  EXPECT_EQ(loop.saved, (std::vector<fs::path>{dir_ / "iter_2.pth", dir_ / "iter_4.pth"}));
  EXPECT_EQ(votes, (std::vector<bool>{false, true, false, false}));  // a vote at every boundary
  // A stop agreed at this boundary (a preemption saved already): no second checkpoint.
  loop.stop = "preempted";
  boundary(5, 100);
  EXPECT_EQ(loop.saved.size(), 2u);
}

TEST_F(HookTest, CheckpointOptionsAreChecked) {
  TrainLog log(false, dir_, "x");
  for (const double bad : {0.0, -1.0, std::numeric_limits<double>::quiet_NaN()}) {
    CheckpointHookOptions o = checkpoint_options(dir_, 1);
    o.interval_seconds = bad;
    EXPECT_THROW(CheckpointHook(o, log), std::invalid_argument) << bad;
  }
}

TEST_F(HookTest, CheckpointIsSavedEveryIntervalAndAfterTheLastEpoch) {
  TrainLog log(false, dir_, "x");
  CheckpointHook hook(checkpoint_options(dir_, 2), log);
  FakeLoop loop;
  loop.p.max_epochs = 5;
  for (std::int64_t done = 1; done <= 5; ++done) {
    loop.p.epochs_completed = done;
    hook.after_train_epoch(loop);
  }
  EXPECT_EQ(loop.saved, (std::vector<fs::path>{dir_ / "epoch_2.pth", dir_ / "epoch_4.pth",
                                               dir_ / "epoch_5.pth"}));
  CheckpointHook last_only(checkpoint_options(dir_, -1), log);
  EXPECT_FALSE(last_only.due(4, 5));
  EXPECT_TRUE(last_only.due(5, 5));
  CheckpointHookOptions no_last = checkpoint_options(dir_, 2);
  no_last.save_last = false;
  CheckpointHook interval_only(no_last, log);
  EXPECT_TRUE(interval_only.due(4, 5));
  EXPECT_FALSE(interval_only.due(5, 5));
}

// One validation as the loop runs it on the writing rank: after_val, and when the hook saved,
// the file written and after_save_checkpoint.
void validate(CheckpointHook& hook, FakeLoop& loop, std::int64_t epochs_done, MetricMap metrics) {
  loop.p.epochs_completed = epochs_done;
  const std::size_t before = loop.saved.size();
  hook.after_val(loop, ValResult{std::move(metrics), 1});
  if (loop.saved.size() > before) {
    std::ofstream(loop.saved.back()) << "x";
    hook.after_save_checkpoint(loop, SavedCheckpoint{loop.saved.back(), true});
  }
}

std::vector<std::string> best_files(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with("best_") && name.ends_with(".pth")) out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST_F(HookTest, SaveBestKeepsOneFileOfTheBestValidation) {
  TrainLog log(false, dir_, "x");
  CheckpointHookOptions o = checkpoint_options(dir_, -1);
  o.save_best = "acc";  // no key metric, no rule: greater is better
  CheckpointHook hook(o, log);
  FakeLoop loop;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  int epoch = 0;
  for (const double acc : {0.5, 0.7, 0.6, 0.7, 0.9, nan})
    validate(hook, loop, ++epoch, {{"acc", acc}});
  // Improvements only; the tie at epoch 4 keeps epoch 2's, NaN never wins.
  EXPECT_EQ(loop.saved,
            (std::vector<fs::path>{dir_ / "best_acc_epoch_1.pth", dir_ / "best_acc_epoch_2.pth",
                                   dir_ / "best_acc_epoch_5.pth"}));
  EXPECT_EQ(best_files(dir_), std::vector<std::string>{"best_acc_epoch_5.pth"});
  EXPECT_FALSE(fs::exists(dir_ / "last_checkpoint"));  // not a resume point of its own
  // The record names the file, the metric and its value.
  const std::optional<BestCheckpointRecord> record = read_best_checkpoint_record(dir_);
  ASSERT_TRUE(record.has_value());
  EXPECT_EQ(record->checkpoint, dir_ / "best_acc_epoch_5.pth");
  EXPECT_EQ(record->metric, "acc");
  EXPECT_EQ(record->score, 0.9);
}

TEST_F(HookTest, SaveBestAutoFollowsTheKeyMetricAndItsRule) {
  TrainLog log(false, dir_, "x");
  CheckpointHookOptions o = checkpoint_options(dir_, -1);
  o.save_best = "auto";
  o.key_metric = [](const MetricMap&) { return KeyMetric{"val/mse", false}; };
  CheckpointHook hook(o, log);
  FakeLoop loop;
  int epoch = 0;
  for (const double mse : {3.0, 2.0, 2.5, 1.0})
    validate(hook, loop, ++epoch, {{"val/mse", mse}, {"other", 0}});
  // Lower is better; the name's "/" becomes "_".
  EXPECT_EQ(loop.saved, (std::vector<fs::path>{dir_ / "best_val_mse_epoch_1.pth",
                                               dir_ / "best_val_mse_epoch_2.pth",
                                               dir_ / "best_val_mse_epoch_4.pth"}));
  // An explicit rule wins over the key metric's.
  CheckpointHookOptions greater = o;
  greater.rule = "greater";
  CheckpointHook flipped(greater, log);
  FakeLoop other;
  epoch = 0;
  for (const double mse : {3.0, 2.0, 4.0}) validate(flipped, other, ++epoch, {{"val/mse", mse}});
  EXPECT_EQ(other.saved, (std::vector<fs::path>{dir_ / "best_val_mse_epoch_1.pth",
                                                dir_ / "best_val_mse_epoch_3.pth"}));
  CheckpointHookOptions bad = o;
  bad.rule = "bigger";
  EXPECT_THROW(CheckpointHook(bad, log), std::invalid_argument);
}

TEST_F(HookTest, SaveBestResumedComparesWithTheBestBeforeAndReplacesItsFile) {
  TrainLog log(false, dir_, "x");
  const fs::path before = dir_ / "best_acc_epoch_2.pth";
  std::ofstream(before) << "x";
  write_best_checkpoint_record(dir_, {before, "acc", 0.8});  // what the first run left
  CheckpointHookOptions o = checkpoint_options(dir_, -1);
  o.save_best = "acc";
  o.resumed = true;
  CheckpointHook hook(o, log);
  FakeLoop loop;
  hook.before_train(loop);
  validate(hook, loop, 3, {{"acc", 0.7}});
  EXPECT_TRUE(loop.saved.empty());
  validate(hook, loop, 4, {{"acc", 0.85}});
  EXPECT_EQ(loop.saved, std::vector<fs::path>{dir_ / "best_acc_epoch_4.pth"});
  EXPECT_EQ(best_files(dir_), std::vector<std::string>{"best_acc_epoch_4.pth"});
  EXPECT_EQ(read_best_checkpoint_record(dir_)->score, 0.85);
  // A fresh run in the same work dir starts over: its first validation is the best.
  o.resumed = false;
  CheckpointHook fresh(o, log);
  FakeLoop again;
  fresh.before_train(again);
  validate(fresh, again, 1, {{"acc", 0.1}});
  EXPECT_EQ(again.saved, std::vector<fs::path>{dir_ / "best_acc_epoch_1.pth"});
  // A resumed run whose record is of another metric, or malformed, starts over too.
  write_best_checkpoint_record(dir_, {dir_ / "best_acc_epoch_1.pth", "mse", 0.0});
  o.resumed = true;
  CheckpointHook other_metric(o, log);
  FakeLoop third;
  other_metric.before_train(third);
  validate(other_metric, third, 2, {{"acc", 0.05}});
  EXPECT_EQ(third.saved.size(), 1u);
  std::ofstream(dir_ / "best_checkpoint") << "only one line\n";
  EXPECT_THROW(read_best_checkpoint_record(dir_), std::runtime_error);
  CheckpointHook malformed(o, log);
  FakeLoop fourth;
  malformed.before_train(fourth);  // a warning, not an error
  validate(malformed, fourth, 3, {{"acc", 0.01}});
  EXPECT_EQ(fourth.saved.size(), 1u);
}

TEST_F(HookTest, SaveBestFollowsRankZerosVerdictAndSurvivesAMissingMetric) {
  TrainLog log(false, dir_, "x");
  CheckpointHookOptions o = checkpoint_options(dir_, -1);
  o.save_best = "acc";
  bool rank0_improved = true;
  CheckpointHook hook(o, log, [&](bool mine) { return mine || rank0_improved; });
  FakeLoop loop;  // a rank without metrics: it saves when rank 0 says so (the save is collective)
  loop.p.epochs_completed = 1;
  hook.after_val(loop, ValResult{});
  EXPECT_EQ(loop.saved.size(), 1u);
  rank0_improved = false;
  hook.after_val(loop, ValResult{});
  EXPECT_EQ(loop.saved.size(), 1u);
  // On rank 0, a metric the validation does not have: a warning, no checkpoint, no error.
  CheckpointHook missing(o, log, [](bool mine) { return mine; });
  FakeLoop rank0;
  validate(missing, rank0, 1, {{"accuracy", 0.9}});
  EXPECT_TRUE(rank0.saved.empty());
}

TEST_F(HookTest, CheckpointBookkeepingPointsAtTheNewestAndKeepsMaxKeep) {
  TrainLog log(false, dir_, "x");
  CheckpointHookOptions keep2 = checkpoint_options(dir_, 1);
  keep2.max_keep = 2;
  CheckpointHook hook(keep2, log);
  FakeLoop loop;
  for (int n = 1; n <= 3; ++n) {
    const fs::path path = dir_ / ("epoch_" + std::to_string(n) + ".pth");
    std::ofstream(path) << "x";
    hook.after_save_checkpoint(loop, SavedCheckpoint{path, true});
  }
  EXPECT_FALSE(fs::exists(dir_ / "epoch_1.pth"));
  EXPECT_TRUE(fs::exists(dir_ / "epoch_2.pth"));
  EXPECT_TRUE(fs::exists(dir_ / "epoch_3.pth"));
  std::string last;
  std::getline(std::ifstream(dir_ / "last_checkpoint"), last);
  EXPECT_EQ(fs::path(last).filename(), "epoch_3.pth");

  // A rank that did not write leaves the work dir alone.
  std::ofstream(dir_ / "epoch_4.pth") << "x";
  hook.after_save_checkpoint(loop, SavedCheckpoint{dir_ / "epoch_4.pth", false});
  EXPECT_TRUE(fs::exists(dir_ / "epoch_2.pth"));
  std::getline(std::ifstream(dir_ / "last_checkpoint"), last);
  EXPECT_EQ(fs::path(last).filename(), "epoch_3.pth");
}

namespace invalid_loss {

TrainIter losses(double cls, double bbox) {
  TrainIter it;
  it.losses["loss_cls"] = at::full({1}, cls, at::kFloat);
  it.losses["loss_bbox"] = at::full({3}, bbox, at::kFloat);
  it.total_loss = it.losses["loss_cls"].sum() + it.losses["loss_bbox"].sum();
  return it;
}

std::string thrown(InvalidLossHook& hook, FakeLoop& loop, TrainIter& it) {
  try {
    hook.after_train_forward(loop, it);
  } catch (const NonFiniteLoss& e) {
    return e.what();
  }
  return "";
}

}  // namespace invalid_loss

TEST_F(HookTest, InvalidLossLeavesAFiniteIterationAlone) {
  TrainLog log(false, dir_, "x");
  InvalidLossHook hook({InvalidLossAction::kStop, 0}, log);
  FakeLoop loop;
  TrainIter it = invalid_loss::losses(0.5, 1.5);
  hook.after_train_forward(loop, it);
  EXPECT_FALSE(it.skip);
  EXPECT_EQ(describe_invalid_loss(it.losses, it.total_loss), "");
}

TEST_F(HookTest, InvalidLossStopsNamingTheIterationTheRankAndEveryTerm) {
  TrainLog log(false, dir_, "x");
  InvalidLossHook hook({InvalidLossAction::kStop, 100}, log);
  FakeLoop loop;
  loop.p.epoch = 1;
  loop.p.iter_in_epoch = 3;
  loop.p.global_iter = 13;
  TrainIter it = invalid_loss::losses(std::nan(""), 1.0);
  const std::string what = invalid_loss::thrown(hook, loop, it);
  EXPECT_NE(what.find("non-finite loss at epoch 2, iteration 4 (global 14)"), std::string::npos)
      << what;
  EXPECT_NE(what.find("rank 0: loss=nan loss_bbox=1 loss_cls=nan"), std::string::npos) << what;
  EXPECT_NE(what.find("on_invalid: skip"), std::string::npos) << what;
  EXPECT_EQ(hook.skipped(), 0);
}

TEST_F(HookTest, InvalidLossFindsAnInfInOneElementOfATerm) {
  TrainLog log(false, dir_, "x");
  TrainIter it = invalid_loss::losses(0.5, 1.0);
  it.losses["loss_bbox"][1] = std::numeric_limits<float>::infinity();
  EXPECT_NE(describe_invalid_loss(it.losses, it.losses["loss_cls"]).find("loss_bbox=inf"),
            std::string::npos);
}

TEST_F(HookTest, InvalidLossSkipsAndCountsUpToMaxSkipsThenStops) {
  TrainLog log(true, dir_ / "run", "x");
  InvalidLossHook hook({InvalidLossAction::kSkip, 2}, log);
  FakeLoop loop;
  for (int i = 0; i < 2; ++i) {
    TrainIter it = invalid_loss::losses(1.0, std::numeric_limits<double>::infinity());
    hook.after_train_forward(loop, it);
    EXPECT_TRUE(it.skip) << i;
    EXPECT_NE(it.skip_reason.find("loss_bbox=inf"), std::string::npos) << it.skip_reason;
  }
  TrainIter fine = invalid_loss::losses(1.0, 1.0);
  hook.after_train_forward(loop, fine);
  EXPECT_FALSE(fine.skip);
  EXPECT_EQ(hook.skipped(), 2);
  TrainIter third = invalid_loss::losses(std::nan(""), 1.0);
  const std::string what = invalid_loss::thrown(hook, loop, third);
  EXPECT_NE(what.find("more than default_hooks.check_invalid_loss.max_skips=2"), std::string::npos)
      << what;
  bool counted = false;
  for (const std::string& line : lines(dir_ / "run" / "x.log"))
    counted |= line.find("iteration skipped (2 of at most 2") != std::string::npos;
  EXPECT_TRUE(counted);
}

TEST_F(HookTest, InvalidLossOnAPeerRankTakesThisRankDownTheSameBranch) {
  // This rank's loss is finite; rank 1's is not: this rank must skip (or stop) too, or its
  // backward's all-reduces would wait for a peer that never runs them.
  TrainLog log(false, dir_, "x");
  std::vector<std::string> sent;
  auto peer_invalid = [&sent](const std::string& mine) {
    sent.push_back(mine);
    return std::vector<std::string>{mine, "loss=inf"};
  };
  FakeLoop loop;
  InvalidLossHook skip({InvalidLossAction::kSkip, 5}, log, peer_invalid);
  TrainIter it = invalid_loss::losses(0.5, 1.0);
  skip.after_train_forward(loop, it);
  EXPECT_TRUE(it.skip);
  EXPECT_NE(it.skip_reason.find("rank 1: loss=inf"), std::string::npos) << it.skip_reason;
  EXPECT_EQ(it.skip_reason.find("rank 0"), std::string::npos) << it.skip_reason;
  InvalidLossHook stop({InvalidLossAction::kStop, 5}, log, peer_invalid);
  TrainIter again = invalid_loss::losses(0.5, 1.0);
  EXPECT_NE(invalid_loss::thrown(stop, loop, again).find("rank 1: loss=inf"), std::string::npos);
  EXPECT_EQ(sent, (std::vector<std::string>{"", ""}));  // a finite rank reports nothing
}

TEST_F(HookTest, PreemptionWaitsForTheVoteThenSavesAtOneIterationAndStops) {
  TrainLog log(true, dir_ / "run", "x");
  bool peer_signalled = false;
  std::vector<bool> sent;
  auto vote = [&](bool mine) {
    sent.push_back(mine);
    const int ranks = (mine ? 1 : 0) + (peer_signalled ? 1 : 0);
    return PreemptionHook::Vote{ranks, ranks == 1 ? (mine ? 0 : 1) : -1};
  };
  PreemptionHook hook(dir_, 2, log, vote);
  FakeLoop loop;
  loop.p.iters_per_epoch = 10;
  TrainIter iter;
  for (std::int64_t i : {0, 1, 2, 3}) {
    loop.p.global_iter = i;
    hook.before_train_iter(loop, iter);
  }
  EXPECT_TRUE(loop.saved.empty());
  EXPECT_EQ(sent, (std::vector<bool>{false, false}));  // only between updates (2 per update)
  // The peer got SIGTERM; this rank did not: it stops with it, at the next update boundary.
  peer_signalled = true;
  loop.p.global_iter = 5;
  hook.before_train_iter(loop, iter);
  EXPECT_TRUE(loop.saved.empty());
  loop.p.global_iter = 6;
  loop.p.iter_in_epoch = 6;
  hook.before_train_iter(loop, iter);
  EXPECT_EQ(loop.saved, std::vector<fs::path>{dir_ / "iter_6.pth"});
  ASSERT_TRUE(loop.stop.has_value());
  EXPECT_EQ(*loop.stop, "preempted by SIGTERM");
  EXPECT_EQ(hook.stopped_by(), SIGTERM);
  bool said = false;
  for (const std::string& line : lines(dir_ / "run" / "x.log"))
    said |= line.find("a termination signal on rank 1: saving " + (dir_ / "iter_6.pth").string() +
                      " at epoch 1, iteration 6 of 10") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST_F(HookTest, PreemptionTakesItsOwnSignalAndIgnoresOthers) {
  TrainLog log(false, dir_, "x");
  PreemptionHook hook(dir_, 1, log);  // one process: the vote is its own
  FakeLoop loop;
  TrainIter iter;
  hook.on_signal(loop, SIGHUP);
  hook.before_train_iter(loop, iter);
  EXPECT_FALSE(loop.stop.has_value());
  hook.on_signal(loop, SIGINT);
  loop.p.global_iter = 3;
  hook.before_train_iter(loop, iter);
  EXPECT_EQ(loop.saved, std::vector<fs::path>{dir_ / "iter_3.pth"});
  EXPECT_EQ(hook.stopped_by(), SIGINT);
  EXPECT_THROW(PreemptionHook(dir_, 0, log), std::invalid_argument);
}

}  // namespace
}  // namespace ddp3d::engine

namespace ddp3d::engine {
namespace {

// One stepped iteration as the loop reports it to after_train_iter.
void stepped_iter(EmaHook& hook, FakeLoop& loop, std::int64_t global_iter, bool stepped = true) {
  loop.p.global_iter = global_iter;
  TrainIter iter;
  iter.update.stepped = stepped;
  hook.after_train_iter(loop, iter);
}

void set_params(ToyRegressor& m, double v) {
  torch::NoGradGuard no_grad;
  for (at::Tensor& p : m.parameters()) p.fill_(v);
}

TEST_F(HookTest, EmaAveragesAfterEachStepFromBeginIterEveryInterval) {
  ToyRegressor model(2, {3}, 1);
  EmaHook hook(model, {0.25, 2, 2});  // momentum 0.25, every 2nd step, after iteration 2
  FakeLoop loop;
  set_params(model, 1.0);
  stepped_iter(hook, loop, 0);  // 1 done: before begin_iter
  stepped_iter(hook, loop, 1);  // 2 done: not after begin_iter
  EXPECT_EQ(hook.updates(), 0);
  stepped_iter(hook, loop, 3);  // 4 done: the first update copies
  set_params(model, 3.0);
  stepped_iter(hook, loop, 4);                     // 5 done: not on the interval
  stepped_iter(hook, loop, 5, /*stepped=*/false);  // accumulating: no new weights
  EXPECT_EQ(hook.updates(), 1);
  stepped_iter(hook, loop, 5);  // 6 done: 0.75 * 1 + 0.25 * 3 = 1.5
  EXPECT_EQ(hook.updates(), 2);
  for (const at::Tensor& e : hook.averaged()) EXPECT_TRUE(at::allclose(e, at::full_like(e, 1.5)));
  // Validation sees the average; training gets its weights back after.
  hook.before_val(loop);
  for (const at::Tensor& p : model.parameters())
    EXPECT_TRUE(at::allclose(p, at::full_like(p, 1.5)));
  hook.after_val(loop, ValResult{});
  for (const at::Tensor& p : model.parameters())
    EXPECT_TRUE(at::allclose(p, at::full_like(p, 3.0)));
  EXPECT_THROW(EmaHook(model, {0.0, 1, 0}), std::invalid_argument);
  EXPECT_THROW(EmaHook(model, {0.5, 0, 0}), std::invalid_argument);
}

TEST_F(HookTest, EmaCheckpointHoldsTheAverageAsTheModelAndResumesExactly) {
  ToyRegressor model(2, {3}, 1);
  EmaHook hook(model, {0.5, 1, 0});
  FakeLoop loop;
  set_params(model, 2.0);
  stepped_iter(hook, loop, 0);
  set_params(model, 4.0);
  stepped_iter(hook, loop, 1);  // average 3
  TrainingState state;
  hook.before_save_checkpoint(loop, state);
  // What the file's model holds while it is written: the average.
  std::vector<at::Tensor> saved_model;
  for (const at::Tensor& p : model.parameters()) saved_model.push_back(p.detach().clone());
  for (const at::Tensor& p : saved_model) EXPECT_TRUE(at::allclose(p, at::full_like(p, 3.0)));
  hook.after_save_checkpoint(loop, SavedCheckpoint{dir_ / "epoch_1.pth", true});
  for (const at::Tensor& p : model.parameters())
    EXPECT_TRUE(at::allclose(p, at::full_like(p, 4.0)));
  EXPECT_EQ(state.hook_tensors.size(), model.parameters().size() + 1);

  // A new process loads the checkpoint: the model gets the file's (average) weights, then the
  // hook takes the trained ones back and continues with the same average.
  ToyRegressor resumed(2, {3}, 1);
  {
    torch::NoGradGuard no_grad;
    const auto dst = resumed.parameters();
    for (std::size_t i = 0; i < dst.size(); ++i) dst[i].copy_(saved_model[i]);
  }
  EmaHook again(resumed, {0.5, 1, 0});
  again.after_load_checkpoint(loop, state);
  EXPECT_EQ(again.updates(), 2);
  for (const at::Tensor& p : resumed.parameters())
    EXPECT_TRUE(at::allclose(p, at::full_like(p, 4.0)));
  for (const at::Tensor& e : again.averaged()) EXPECT_TRUE(at::allclose(e, at::full_like(e, 3.0)));
  // A checkpoint of another model is refused.
  ToyRegressor other(5, {3}, 1);
  EmaHook mismatch(other, {0.5, 1, 0});
  EXPECT_THROW(mismatch.after_load_checkpoint(loop, state), std::runtime_error);
  // A checkpoint written without the hook leaves it to start anew.
  EmaHook fresh(resumed, {0.5, 1, 0});
  fresh.after_load_checkpoint(loop, TrainingState{});
  EXPECT_EQ(fresh.updates(), 0);
}

TEST_F(HookTest, HookRegistryBuildsByTypeAtItsPriorityAndNamesBadKeys) {
  components::register_builtin_schemas();
  const fs::path file = dir_ / "hooks.yaml";
  const std::string base =
      "model: {type: ToyRegressor, in_features: 2, hidden: [4], out_features: 1}\n"
      "train_dataloader: {batch_size: 1, dataset: {type: SyntheticRegression, num_samples: 4}}\n"
      "optim_wrapper: {optimizer: {type: AdamW, lr: 0.001}}\n"
      "train_cfg: {max_epochs: 1}\n";
  std::ofstream(file) << base
                      << "custom_hooks: [{type: EMAHook}, {type: EMAHook, priority: VERY_HIGH}]\n";
  const std::vector<config::Config> hooks = config::load(file).list("custom_hooks");
  HookRegistry registry;
  TrainLog log(false, dir_, "x");
  ToyRegressor model(2, {3}, 1);
  RunContext run;
  const HookBuildContext ctx{.log = log, .run = run, .model = model, .work_dir = dir_};
  try {
    registry.build(hooks[0], ctx);  // a schema without a factory (e.g. a tool that only validates)
    FAIL();
  } catch (const config::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("custom_hooks.0.type"), std::string::npos) << e.what();
  }
  const auto noop = [](const config::Config&, const HookBuildContext&) {
    return std::make_shared<Hook>();
  };
  registry.add("EMAHook", noop, HookPriority::kLow);
  EXPECT_THROW(registry.add("EMAHook", noop, HookPriority::kLow), std::logic_error);
  EXPECT_EQ(registry.build(hooks[0], ctx).priority, HookPriority::kLow);  // the type's default
  EXPECT_EQ(registry.build(hooks[1], ctx).priority, HookPriority::kVeryHigh);
  // The schema refuses what no registry should see: an unknown type, an unknown priority.
  for (const std::string& bad :
       {std::string("custom_hooks: [{type: Nope}]\n"),
        std::string("custom_hooks: [{type: EMAHook, priority: SOON}]\n")}) {
    std::ofstream(file) << base << bad;
    try {
      config::load(file);
      FAIL() << bad;
    } catch (const config::ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("custom_hooks.0."), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace ddp3d::engine
