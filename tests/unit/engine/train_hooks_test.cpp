// The standard hooks, each alone against a fake loop (no DDP, no process group): the timer's
// data/iteration times, the schedule reaching the optimizer, the logger's window means and
// records, the telemetry's per-step records, and the checkpoint hook's schedule and
// bookkeeping.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/optim/optimizer.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "worker/engine/hooks/checkpoint_hook.h"
#include "worker/engine/hooks/iter_timer_hook.h"
#include "worker/engine/hooks/logger_hook.h"
#include "worker/engine/hooks/param_scheduler_hook.h"
#include "worker/engine/hooks/telemetry_hook.h"

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
  warmup.kind = ScheduleKind::kLinear;
  warmup.by_epoch = false;
  warmup.begin = 0;
  warmup.end = 4;
  warmup.start_factor = 0.5;
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
  void on_step(const StepRecord& step) override { steps.push_back(step); }
  void on_loss(double mean_loss) override { losses.push_back(mean_loss); }
  std::vector<StepRecord> steps;
  std::vector<double> losses;
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

TEST_F(HookTest, CheckpointIsSavedEveryIntervalAndAfterTheLastEpoch) {
  TrainLog log(false, dir_, "x");
  CheckpointHook hook({dir_, 2, -1}, log);
  FakeLoop loop;
  loop.p.max_epochs = 5;
  for (std::int64_t done = 1; done <= 5; ++done) {
    loop.p.epochs_completed = done;
    hook.after_train_epoch(loop);
  }
  EXPECT_EQ(loop.saved, (std::vector<fs::path>{dir_ / "epoch_2.pth", dir_ / "epoch_4.pth",
                                               dir_ / "epoch_5.pth"}));
  CheckpointHook last_only({dir_, -1, -1}, log);
  EXPECT_FALSE(last_only.due(4, 5));
  EXPECT_TRUE(last_only.due(5, 5));
}

TEST_F(HookTest, CheckpointBookkeepingPointsAtTheNewestAndKeepsMaxKeep) {
  TrainLog log(false, dir_, "x");
  CheckpointHook hook({dir_, 1, 2}, log);
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

}  // namespace
}  // namespace ddp3d::engine
