// The train loop's hook points: a hook added from outside (Runner::add_hook, no change to the
// loop) is called at every point, in order, with the right epoch and iteration; priorities
// order hooks; an after_train_forward hook can veto an update; a hook can stop training; a
// pending signal reaches on_signal at the next iteration boundary.
#include "worker/engine/train_loop.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/utils.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tests/unit/config/temp_dir.h"
#include "worker/components/builtin_components.h"
#include "worker/config/component_schemas.h"
#include "worker/config/schema.h"
#include "worker/engine/eval_loop_registry.h"
#include "worker/engine/evaluate.h"
#include "worker/engine/hook_registry.h"
#include "worker/engine/optim_wrapper_registry.h"
#include "worker/engine/runner.h"
#include "worker/engine/toy/regression_metric.h"
#include "worker/engine/toy/synthetic_regression.h"
#include "worker/engine/toy/toy_regressor.h"
#include "worker/engine/train_loop_registry.h"
#include "worker/engine/train_loop_schemas.h"

namespace ddp3d::engine {
namespace {
namespace fs = std::filesystem;

// Writes one line per hook call: the point and where the loop stood.
class RecordingHook : public Hook {
 public:
  std::vector<std::string> calls;

  void before_train(LoopContext& loop) override { note("before_train", loop); }
  void after_train(LoopContext& loop) override { note("after_train", loop); }
  void before_train_epoch(LoopContext& loop) override { note("before_train_epoch", loop); }
  void after_train_epoch(LoopContext& loop) override { note("after_train_epoch", loop); }
  void before_train_iter(LoopContext& loop, TrainIter& iter) override {
    EXPECT_NE(iter.batch, nullptr);
    EXPECT_TRUE(iter.losses.empty());  // forward has not run yet
    note("before_train_iter", loop);
  }
  void after_train_forward(LoopContext& loop, TrainIter& iter) override {
    EXPECT_TRUE(iter.total_loss.defined());
    EXPECT_TRUE(iter.log_vars.empty());  // the update has not run yet
    note("after_train_forward", loop);
  }
  void after_train_iter(LoopContext& loop, TrainIter& iter) override {
    EXPECT_TRUE(iter.update.stepped);
    ASSERT_FALSE(iter.log_vars.empty());
    EXPECT_EQ(iter.log_vars[0].first, "loss");
    note("after_train_iter", loop);
  }
  void before_val(LoopContext& loop) override { note("before_val", loop); }
  void after_val(LoopContext& loop, const ValResult& result) override {
    EXPECT_EQ(result.metrics.count("mse"), 1u);
    note("after_val", loop);
  }
  void before_save_checkpoint(LoopContext& loop, TrainingState& state) override {
    note("before_save_checkpoint state.epoch=" + std::to_string(state.epoch) +
             " state.iter=" + std::to_string(state.iter),
         loop);
  }
  void after_save_checkpoint(LoopContext& loop, const SavedCheckpoint& saved) override {
    EXPECT_TRUE(fs::exists(saved.path)) << saved.path;
    note("after_save_checkpoint " + saved.path.filename().string() +
             (saved.written ? " written" : ""),
         loop);
  }
  void on_signal(LoopContext& loop, int signal) override {
    note("on_signal " + std::to_string(signal), loop);
  }

 private:
  void note(const std::string& point, const LoopContext& loop) {
    const LoopProgress& p = loop.progress();
    calls.push_back(point + " epoch=" + std::to_string(p.epoch) +
                    " iter_in_epoch=" + std::to_string(p.iter_in_epoch) +
                    " global_iter=" + std::to_string(p.global_iter));
  }
};

std::string at(const std::string& point, std::int64_t epoch, std::int64_t iter_in_epoch,
               std::int64_t global_iter) {
  return point + " epoch=" + std::to_string(epoch) +
         " iter_in_epoch=" + std::to_string(iter_in_epoch) +
         " global_iter=" + std::to_string(global_iter);
}

RunnerOptions options_for(const fs::path& dir) {
  components::register_builtin_components();  // the default hooks' schemas and factories
  RunnerOptions o;
  o.work_dir = dir;
  o.train_cfg = train_loop_config("{max_epochs: 2}");
  o.val_cfg = val_loop_config("{}");
  o.train_loader.batch_size = 16;  // 48 samples: 3 iterations per epoch
  o.train_loader.shuffle = false;
  o.optim_wrapper = optim_wrapper_config("{optimizer: {type: SGD, lr: 0.05}}");
  o.default_hooks = default_hooks_config("{logger: {interval: 1000}, checkpoint: {interval: 1}}");
  return o;
}

std::shared_ptr<SyntheticRegression> data(std::int64_t samples) {
  SyntheticRegressionOptions d;
  d.num_samples = samples;
  d.seed = 5;
  return std::make_shared<SyntheticRegression>(d);
}

std::shared_ptr<ToyRegressor> fresh_model() {
  torch::manual_seed(3);
  return std::make_shared<ToyRegressor>(8, std::vector<std::int64_t>{16}, 1);
}

class TrainLoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("ddp3d_train_loop_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A loop over a toy model with no hooks but the test's (and no validation).
  struct Bare {
    RunnerOptions options;
    std::shared_ptr<ToyRegressor> model = fresh_model();
    OptimWrapper optim;
    TrainLoop loop;
    Bare(const RunnerOptions& o, std::int64_t samples)
        : options(o),
          optim(*model, optim_wrapper_options(o.optim_wrapper, /*max_iters=*/6)),
          loop(options, train_loop_registry().build(options.train_cfg), RunContext{}, *model, optim,
               nullptr, data(samples), nullptr, nullptr, 3) {}
  };

  // What a RecordingHook saw of a Runner's run with `o`, validating on 32 samples; `extra`
  // (if any) runs after it.
  std::vector<std::string> recorded_run(RunnerOptions o,
                                        const std::shared_ptr<Hook>& extra = nullptr) const {
    o.val_loader = LoaderSpec{};
    o.val_loader->batch_size = 16;
    SyntheticRegressionOptions v;
    v.num_samples = 32;
    auto recorder = std::make_shared<RecordingHook>();
    TrainLog log(false, dir_, "x");
    Runner runner(o, RunContext{}, fresh_model(), data(48),
                  std::make_shared<SyntheticRegression>(v), std::make_shared<RegressionMetric>(),
                  log);
    runner.add_hook(recorder);
    if (extra) runner.add_hook(extra);
    runner.train();
    return recorder->calls;
  }

  fs::path dir_;
};

TEST_F(TrainLoopTest, ATestHookAddedToTheRunnerSeesEveryPointWithItsEpochAndIteration) {
  RunnerOptions o = options_for(dir_);
  const std::vector<std::string> calls = recorded_run(o);

  std::vector<std::string> expected{at("before_train", 0, 0, 0)};
  std::int64_t g = 0;
  for (std::int64_t epoch = 0; epoch < 2; ++epoch) {
    expected.push_back(at("before_train_epoch", epoch, 0, g));
    for (std::int64_t i = 0; i < 3; ++i, ++g) {
      for (const char* point : {"before_train_iter", "after_train_forward", "after_train_iter"})
        expected.push_back(at(point, epoch, i, g));
    }
    expected.push_back(at("after_train_epoch", epoch, 2, g));
    const std::string done = std::to_string(epoch + 1);
    expected.push_back(
        at("before_save_checkpoint state.epoch=" + done + " state.iter=" + std::to_string(g), epoch,
           2, g));
    expected.push_back(at("after_save_checkpoint epoch_" + done + ".pth written", epoch, 2, g));
    // Between epochs `epoch` counts the epochs done (mmengine's runner.epoch).
    expected.push_back(at("before_val", epoch + 1, 2, g));
    expected.push_back(at("after_val", epoch + 1, 2, g));
  }
  expected.push_back(at("after_train", 2, 2, 6));
  EXPECT_EQ(calls, expected);
}

// IterBasedTrainLoop: 7 iterations over 3-iteration passes; validation and iteration
// checkpoints every 3 iterations, the last ones at 7, inside the third pass (which gets no
// after_train_epoch).
TEST_F(TrainLoopTest, AnIterationLoopValidatesBetweenIterationsAndEndsInsideAnEpoch) {
  RunnerOptions o = options_for(dir_);
  o.train_cfg = train_loop_config("{type: IterBasedTrainLoop, max_iters: 7, val_interval: 3}");
  o.default_hooks = default_hooks_config(
      "{logger: {interval: 1000}, checkpoint: {interval: 3, by_epoch: false}}");
  const std::vector<std::string> got = recorded_run(o);

  const auto iteration = [](std::vector<std::string>& calls, std::int64_t epoch, std::int64_t i,
                            std::int64_t g) {
    for (const char* point : {"after_train_forward", "after_train_iter"})
      calls.push_back(at(point, epoch, i, g));
  };
  const auto saved = [](std::vector<std::string>& calls, std::int64_t epoch, std::int64_t i,
                        std::int64_t g, std::int64_t state_epoch) {
    calls.push_back(at("before_save_checkpoint state.epoch=" + std::to_string(state_epoch) +
                           " state.iter=" + std::to_string(g),
                       epoch, i, g));
    calls.push_back(
        at("after_save_checkpoint iter_" + std::to_string(g) + ".pth written", epoch, i, g));
  };
  std::vector<std::string> e{at("before_train", 0, 0, 0), at("before_train_epoch", 0, 0, 0)};
  for (std::int64_t g = 0; g < 3; ++g) {
    e.push_back(at("before_train_iter", 0, g, g));
    iteration(e, 0, g, g);
  }
  e.push_back(at("before_val", 0, 2, 3));
  e.push_back(at("after_val", 0, 2, 3));
  e.push_back(at("after_train_epoch", 0, 2, 3));
  e.push_back(at("before_train_epoch", 1, 0, 3));
  for (std::int64_t g = 3; g < 6; ++g) {
    e.push_back(at("before_train_iter", 1, g - 3, g));
    if (g == 3) saved(e, 1, 0, 3, 1);  // at the boundary after iteration 3's validation
    iteration(e, 1, g - 3, g);
  }
  e.push_back(at("before_val", 1, 2, 6));
  e.push_back(at("after_val", 1, 2, 6));
  e.push_back(at("after_train_epoch", 1, 2, 6));
  e.push_back(at("before_train_epoch", 2, 0, 6));
  e.push_back(at("before_train_iter", 2, 0, 6));
  saved(e, 2, 0, 6, 2);
  iteration(e, 2, 0, 6);
  e.push_back(at("before_val", 2, 0, 7));  // the last iteration validates too
  e.push_back(at("after_val", 2, 0, 7));
  e.push_back(at("after_train", 2, 0, 7));
  saved(e, 2, 0, 7, 2);  // save_last, after the loop: no epoch ended there
  EXPECT_EQ(got, e);
  EXPECT_TRUE(fs::exists(dir_ / "iter_7.pth"));
  EXPECT_FALSE(fs::exists(dir_ / "epoch_2.pth"));
}

// A run resumed from an IterBasedTrainLoop's checkpoint inside an epoch ends with the same
// weights, bit for bit, as the run that was not interrupted.
TEST_F(TrainLoopTest, AnIterationLoopResumedInsideAnEpochEndsWithTheSameWeights) {
  RunnerOptions o = options_for(dir_ / "whole");
  o.train_cfg = train_loop_config("{type: IterBasedTrainLoop, max_iters: 8}");
  // iter_4.pth: one iteration into the second pass
  o.default_hooks = default_hooks_config(
      "{logger: {interval: 1000}, checkpoint: {interval: 4, by_epoch: false}}");
  o.train_loader.shuffle = true;
  fs::create_directories(dir_ / "whole");
  fs::create_directories(dir_ / "resumed");
  TrainLog log(false, dir_, "x");
  const auto whole = fresh_model();
  Runner(o, RunContext{}, whole, data(48), nullptr, nullptr, log).train();
  ASSERT_TRUE(fs::exists(dir_ / "whole" / "iter_4.pth"));

  RunnerOptions r = o;
  r.work_dir = dir_ / "resumed";
  r.resume = (dir_ / "whole" / "iter_4.pth").string();
  torch::manual_seed(99);  // the resumed run must not depend on the process's RNG
  const auto resumed = std::make_shared<ToyRegressor>(8, std::vector<std::int64_t>{16}, 1);
  Runner(r, RunContext{}, resumed, data(48), nullptr, nullptr, log).train();
  const auto a = whole->parameters();
  const auto b = resumed->parameters();
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t k = 0; k < a.size(); ++k) EXPECT_TRUE(at::equal(a[k], b[k])) << k;
  EXPECT_TRUE(fs::exists(dir_ / "resumed" / "iter_8.pth"));
}

// A loop kind from outside the engine: trains max_epochs, validates after the epochs listed.
class ValidateAtLoop final : public LoopPlan {
 public:
  ValidateAtLoop(std::int64_t max_epochs, std::vector<std::int64_t> at)
      : max_epochs_(max_epochs), at_(std::move(at)) {}
  void set_limits(LoopProgress& p) const override {
    p.max_epochs = max_epochs_;
    p.iteration_limit = 0;
  }
  bool validate_after_epoch(const LoopProgress& p) const override {
    return std::find(at_.begin(), at_.end(), p.epochs_completed) != at_.end();
  }
  bool validate_after_iter(const LoopProgress& /*p*/) const override { return false; }

 private:
  std::int64_t max_epochs_;
  std::vector<std::int64_t> at_;
};

// Its keys and its factory are the whole registration; the runner and the loop are untouched.
TEST_F(TrainLoopTest, ALoopRegisteredOutsideTheEngineDecidesWhenTheRunValidates) {
  static const bool registered = [] {
    using S = config::Schema;
    config::component_schemas().add(
        "train_loop", "ValidateAtLoop",
        train_loop_fields({{"max_epochs", S::integer().min(1).required()},
                           {"val_at", S::list(S::integer().min(1)).required()}}));
    train_loop_registry().add("ValidateAtLoop", [](const config::Config& node) {
      return std::make_shared<ValidateAtLoop>(node.get<std::int64_t>("max_epochs"),
                                              node.get<std::vector<std::int64_t>>("val_at"));
    });
    return true;
  }();
  ASSERT_TRUE(registered);
  RunnerOptions o = options_for(dir_);
  o.train_cfg = train_loop_config("{type: ValidateAtLoop, max_epochs: 4, val_at: [1, 3]}");
  o.default_hooks = default_hooks_config("{logger: {interval: 1000}, checkpoint: {interval: -1}}");
  const std::vector<std::string> calls = recorded_run(o);
  std::vector<std::string> validated;
  for (const std::string& c : calls)
    if (c.starts_with("before_val")) validated.push_back(c);
  EXPECT_EQ(validated,
            (std::vector<std::string>{at("before_val", 1, 2, 3), at("before_val", 3, 2, 9)}));
  EXPECT_EQ(calls.back(), at("after_train", 4, 2, 12));

  // A key of another loop, and a type nobody registered, fail naming the key.
  const auto error_of = [](std::string_view yaml) {
    return config::testing::error_of([&] { train_loop_config(yaml); });
  };
  EXPECT_NE(error_of("{type: ValidateAtLoop, max_epochs: 2, val_at: [1], max_iters: 9}")
                .find("train_cfg.max_iters: not a key of ValidateAtLoop; IterBasedTrainLoop has "
                      "it (set train_cfg.type)"),
            std::string::npos);
  EXPECT_NE(error_of("{type: FlatLoop, max_epochs: 2}").find("train_cfg.type"), std::string::npos);
}

// A validation loop from outside the engine: evaluates `repeats` times and reports how often.
class RepeatValLoop final : public EvalLoop {
 public:
  explicit RepeatValLoop(std::int64_t repeats) : repeats_(repeats) {}
  MetricMap run(const EvalPass& p) const override {
    MetricMap m;
    for (std::int64_t i = 0; i < repeats_; ++i)
      m = evaluate(p.model, p.dataset, p.loader, p.evaluator, p.ctx, p.draw);
    m["passes"] = static_cast<double>(repeats_);
    return m;
  }

 private:
  std::int64_t repeats_;
};

// Keeps the metrics of every validation.
class MetricsHook : public Hook {
 public:
  std::vector<MetricMap> seen;
  void after_val(LoopContext& /*loop*/, const ValResult& result) override {
    seen.push_back(result.metrics);
  }
};

TEST_F(TrainLoopTest, AValidationLoopRegisteredOutsideTheEngineScoresTheRun) {
  static const bool registered = [] {
    config::component_schemas().add(
        "val_loop", "RepeatValLoop",
        {{"repeats", config::Schema::integer().min(1).def(2).doc("passes over the data")}});
    eval_loop_registry().add("RepeatValLoop", [](const config::Config& node) {
      return std::make_shared<RepeatValLoop>(node.get<std::int64_t>("repeats"));
    });
    return true;
  }();
  ASSERT_TRUE(registered);
  RunnerOptions o = options_for(dir_);
  o.val_cfg = val_loop_config("{type: RepeatValLoop, repeats: 3}");
  o.default_hooks = default_hooks_config("{logger: {interval: 1000}, checkpoint: {interval: -1}}");
  auto metrics = std::make_shared<MetricsHook>();
  recorded_run(o, metrics);
  ASSERT_EQ(metrics->seen.size(), 2u);  // after each of the 2 epochs
  for (const MetricMap& m : metrics->seen) {
    EXPECT_EQ(m.at("passes"), 3.0);
    EXPECT_EQ(m.count("mse"), 1u);
  }
  // The built-in loop adds nothing; a key of another loop names its key.
  o.val_cfg = val_loop_config("{}");
  EXPECT_EQ(o.val_cfg.get<std::string>("type"), "ValLoop");
  EXPECT_NE(config::testing::error_of([] {
              val_loop_config("{repeats: 2}");
            }).find("val_cfg.repeats: not a key of ValLoop; RepeatValLoop has it"),
            std::string::npos);
}

// mmengine's older spelling: by_epoch: false without a type is an IterBasedTrainLoop.
TEST_F(TrainLoopTest, ByEpochFalseWithoutATypeIsAnIterationLoop) {
  components::register_builtin_components();
  const config::Config cfg = train_loop_config("{by_epoch: false, max_iters: 7}");
  EXPECT_EQ(cfg.get<std::string>("type"), "IterBasedTrainLoop");
  const LoopProgress p = planned_progress(*train_loop_registry().build(cfg), 3);
  EXPECT_FALSE(p.by_epoch());
  EXPECT_EQ(p.max_iters(), 7);
  EXPECT_EQ(p.max_epochs, 3);
  EXPECT_EQ(train_loop_config("{max_epochs: 2}").get<std::string>("type"), "EpochBasedTrainLoop");
  EXPECT_EQ(train_loop_config("{by_epoch: true, max_epochs: 2}").get<std::string>("type"),
            "EpochBasedTrainLoop");
}

// Appends its name to a shared list at before_train_iter.
class NamedHook : public Hook {
 public:
  NamedHook(std::string name, std::vector<std::string>& order)
      : name_(std::move(name)), order_(order) {}
  void before_train(LoopContext& /*loop*/) override { order_.push_back(name_); }

 private:
  std::string name_;
  std::vector<std::string>& order_;
};

TEST_F(TrainLoopTest, HooksRunByPriorityThenInRegistrationOrder) {
  RunnerOptions o = options_for(dir_);
  o.train_cfg = train_loop_config("{max_epochs: 1}");
  Bare b(o, 48);
  std::vector<std::string> order;
  b.loop.add_hook(std::make_shared<NamedHook>("low", order), HookPriority::kLow);
  b.loop.add_hook(std::make_shared<NamedHook>("normal-1", order), HookPriority::kNormal);
  b.loop.add_hook(std::make_shared<NamedHook>("highest", order), HookPriority::kHighest);
  b.loop.add_hook(std::make_shared<NamedHook>("normal-2", order), HookPriority::kNormal);
  b.loop.run();
  EXPECT_EQ(order, (std::vector<std::string>{"highest", "normal-1", "normal-2", "low"}));
}

// A guard that vetoes every update after seeing the loss (as a non-finite-loss guard would).
class SkipEveryUpdate : public Hook {
 public:
  int skipped = 0;
  void after_train_forward(LoopContext& /*loop*/, TrainIter& iter) override {
    iter.skip = true;
    iter.skip_reason = "test";
  }
  void after_train_iter(LoopContext& /*loop*/, TrainIter& iter) override {
    EXPECT_FALSE(iter.update.stepped);
    ++skipped;
  }
};

TEST_F(TrainLoopTest, AnAfterForwardHookCanSkipTheUpdate) {
  Bare b(options_for(dir_), 48);
  std::vector<at::Tensor> before;
  for (const at::Tensor& p : b.model->parameters()) before.push_back(p.detach().clone());
  auto guard = std::make_shared<SkipEveryUpdate>();
  b.loop.add_hook(guard);
  b.loop.run();
  EXPECT_EQ(guard->skipped, 6);
  const auto after = b.model->parameters();
  for (std::size_t i = 0; i < before.size(); ++i) {
    EXPECT_TRUE(at::equal(before[i], after[i])) << "parameter " << i << " was updated";
    EXPECT_FALSE(after[i].grad().defined() && after[i].grad().abs().sum().item<double>() != 0)
        << "parameter " << i << " kept a gradient";
  }
}

// Requests a stop after global iteration `at`, counting what runs afterwards.
class StopAt : public Hook {
 public:
  explicit StopAt(std::int64_t at) : at_(at) {}
  std::int64_t iterations = 0;
  int epochs_ended = 0;
  bool after_train_called = false;
  void after_train_iter(LoopContext& loop, TrainIter& /*iter*/) override {
    ++iterations;
    if (loop.progress().global_iter == at_) loop.request_stop("test stop");
  }
  void after_train_epoch(LoopContext& /*loop*/) override { ++epochs_ended; }
  void after_train(LoopContext& loop) override {
    after_train_called = true;
    EXPECT_EQ(loop.stop_reason().value_or(""), "test stop");
  }

 private:
  std::int64_t at_;
};

TEST_F(TrainLoopTest, AStopRequestEndsTrainingAfterTheCurrentIteration) {
  Bare b(options_for(dir_), 48);
  auto stop = std::make_shared<StopAt>(4);  // the second iteration of epoch 1
  b.loop.add_hook(stop);
  b.loop.run();
  EXPECT_EQ(stop->iterations, 5);
  EXPECT_EQ(stop->epochs_ended, 1);  // the unfinished epoch is not reported as done
  EXPECT_TRUE(stop->after_train_called);
  EXPECT_EQ(b.loop.progress().global_iter, 5);
  EXPECT_EQ(b.loop.progress().epochs_completed, 1);
}

// Notes SIGTERM (as a signal handler would) during iteration `at`; records on_signal calls.
class SignalDuring : public Hook {
 public:
  SignalDuring(PendingSignal& pending, std::int64_t at) : pending_(pending), at_(at) {}
  std::vector<std::pair<int, std::int64_t>> received;  // (signal, iterations completed)
  void after_train_forward(LoopContext& loop, TrainIter& /*iter*/) override {
    if (loop.progress().global_iter == at_) pending_.notify(SIGTERM);
  }
  void on_signal(LoopContext& loop, int signal) override {
    received.emplace_back(signal, loop.progress().global_iter);
  }

 private:
  PendingSignal& pending_;
  std::int64_t at_;
};

TEST_F(TrainLoopTest, APendingSignalReachesOnSignalOnceAtTheNextIterationBoundary) {
  Bare b(options_for(dir_), 48);
  PendingSignal pending;
  b.loop.set_pending_signal(&pending);
  auto hook = std::make_shared<SignalDuring>(pending, 2);
  b.loop.add_hook(hook);
  b.loop.run();
  ASSERT_EQ(hook->received.size(), 1u);
  EXPECT_EQ(hook->received[0].first, SIGTERM);
  EXPECT_EQ(hook->received[0].second, 3);  // iteration 2 finished, iteration 3 not started
  EXPECT_EQ(pending.take(), 0);
}

}  // namespace
}  // namespace ddp3d::engine
