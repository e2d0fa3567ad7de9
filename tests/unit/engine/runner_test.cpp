// The runner in one process: gradient accumulation equals one bigger batch, bf16 autocast on
// CPU trains, checkpoints + resume reproduce an uninterrupted run, and the telemetry observer
// sees every iteration.
#include "worker/engine/runner.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/utils.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>

#include "worker/components/builtin_components.h"
#include "worker/config/component_schemas.h"
#include "worker/engine/eval_loop_registry.h"
#include "worker/engine/hook_registry.h"
#include "worker/engine/optim_wrapper_registry.h"
#include "worker/engine/schedule_rules.h"
#include "worker/engine/toy/regression_metric.h"
#include "worker/engine/toy/synthetic_regression.h"
#include "worker/engine/toy/toy_regressor.h"
#include "worker/engine/train_loop_registry.h"

namespace ddp3d::engine {
namespace {
namespace fs = std::filesystem;

struct Trained {
  std::vector<at::Tensor> params;
};

RunnerOptions base_options(const fs::path& dir) {
  components::register_builtin_components();  // the default hooks' schemas and factories
  RunnerOptions o;
  o.work_dir = dir;
  o.train_cfg = train_loop_config("{max_epochs: 2}");
  o.val_cfg = val_loop_config("{}");
  o.optim_wrapper = optim_wrapper_config("{optimizer: {type: SGD, lr: 0.05}}");
  o.train_loader.batch_size = 8;
  o.train_loader.shuffle = false;
  o.default_hooks = default_hooks_config("{logger: {interval: 1000}, checkpoint: {interval: -1}}");
  return o;
}

std::vector<at::Tensor> train(const RunnerOptions& o, std::shared_ptr<Model> model,
                              std::int64_t samples = 64) {
  SyntheticRegressionOptions d;
  d.num_samples = samples;
  d.seed = 5;
  d.noise = 0.01;
  auto data = std::make_shared<SyntheticRegression>(d);
  TrainLog log(false, o.work_dir, "x");
  RunContext ctx;
  ctx.seed = 11;
  Runner runner(o, ctx, model, data, nullptr, nullptr, log);
  runner.train();
  std::vector<at::Tensor> out;
  for (const at::Tensor& p : model->parameters()) out.push_back(p.detach().clone());
  return out;
}

std::shared_ptr<ToyRegressor> fresh_model() {
  torch::manual_seed(3);
  return std::make_shared<ToyRegressor>(8, std::vector<std::int64_t>{16}, 1);
}

class RunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("ddp3d_runner_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(RunnerTest, AccumulationEqualsOneBigBatch) {
  RunnerOptions big = base_options(dir_);
  RunnerOptions accumulated = base_options(dir_);
  accumulated.train_loader.batch_size = 4;
  accumulated.optim_wrapper =
      optim_wrapper_config("{optimizer: {type: SGD, lr: 0.05}, accumulative_counts: 2}");
  const auto a = train(big, fresh_model());
  const auto b = train(accumulated, fresh_model());
  const auto untouched = fresh_model()->parameters();
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(at::allclose(a[i], b[i], 1e-5, 1e-6)) << "parameter " << i;
    EXPECT_FALSE(at::allclose(a[i], untouched[i])) << "parameter " << i << " never trained";
  }
}

// The checkpoint hook from config stops only between updates: it learns the wrapper's
// accumulative_counts from the wrapper the runner built (8 iterations, interval 3).
TEST_F(RunnerTest, IterationCheckpointsWaitForTheWrappersUpdateBoundary) {
  const auto saved = [&](const std::string& optim_wrapper) {
    RunnerOptions o = base_options(dir_ / optim_wrapper.substr(0, 2));
    o.train_cfg = train_loop_config("{max_epochs: 1}");
    o.optim_wrapper = optim_wrapper_config(optim_wrapper);
    o.default_hooks = default_hooks_config(
        "{logger: {interval: 1000}, checkpoint: {by_epoch: false, interval: 3, save_last: false}}");
    fs::create_directories(o.work_dir);
    train(o, fresh_model());
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(o.work_dir))
      if (entry.path().extension() == ".pth") names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  };
  EXPECT_EQ(saved("{optimizer: {type: SGD, lr: 0.05}}"),
            (std::vector<std::string>{"iter_3.pth", "iter_6.pth"}));
  EXPECT_EQ(saved("{accumulative_counts: 2, optimizer: {type: SGD, lr: 0.05}}"),
            (std::vector<std::string>{"iter_4.pth", "iter_6.pth"}));
}

TEST_F(RunnerTest, Bf16AutocastTrainsOnCpu) {
  RunnerOptions o = base_options(dir_);
  o.optim_wrapper = optim_wrapper_config(
      "{type: AmpOptimWrapper, dtype: bfloat16, optimizer: {type: SGD, lr: 0.05}}");
  auto model = fresh_model();
  const auto after = train(o, model);
  for (const at::Tensor& p : after) EXPECT_TRUE(at::isfinite(p).all().item<bool>());
  EXPECT_FALSE(at::allclose(after[0], fresh_model()->parameters()[0]));
}

TEST_F(RunnerTest, Fp16OnCpuIsRefusedClearly) {
  RunnerOptions o = base_options(dir_);
  o.optim_wrapper =
      optim_wrapper_config("{type: AmpOptimWrapper, optimizer: {type: SGD, lr: 0.05}}");
  try {
    train(o, fresh_model());
    FAIL();
  } catch (const config::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("optim_wrapper.dtype"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("CUDA"), std::string::npos) << e.what();
  }
}

TEST_F(RunnerTest, ResumeReproducesTheUninterruptedRun) {
  RunnerOptions o = base_options(dir_ / "full");
  o.train_cfg = train_loop_config("{max_epochs: 3}");
  // Momentum: the optimizer's state must come back too.
  o.optim_wrapper = optim_wrapper_config("{optimizer: {type: SGD, lr: 0.05, momentum: 0.9}}");
  o.train_loader.shuffle = true;
  o.default_hooks = default_hooks_config("{logger: {interval: 1000}, checkpoint: {interval: 1}}");
  fs::create_directories(o.work_dir);
  const auto full = train(o, fresh_model());

  RunnerOptions first = o;
  first.work_dir = dir_ / "split";
  first.train_cfg =
      train_loop_config("{max_epochs: 1}");  // stops after epoch 1, as if killed there
  fs::create_directories(first.work_dir);
  train(first, fresh_model());
  RunnerOptions second = o;
  second.work_dir = first.work_dir;
  second.resume = "auto";
  // A different initial model: everything must come from the checkpoint.
  torch::manual_seed(99);
  const auto resumed =
      train(second, std::make_shared<ToyRegressor>(8, std::vector<std::int64_t>{16}, 1));
  for (std::size_t i = 0; i < full.size(); ++i) {
    EXPECT_TRUE(at::allclose(full[i], resumed[i], 1e-6, 1e-7)) << "parameter " << i;
  }
}

// A model with two loss terms of different size, to see each logged under its own name.
class TwoLossRegressor : public ToyRegressor {
 public:
  TwoLossRegressor() : ToyRegressor(8, std::vector<std::int64_t>{16}, 1) {}
  LossMap forward_train(const Batch& batch) override {
    const at::Tensor l = ToyRegressor::forward_train(batch).at("loss");
    return {{"loss_a", l}, {"loss_b", 3 * l + 1}};
  }
};

TEST_F(RunnerTest, EachLossTermIsLoggedUnderItsOwnName) {
  RunnerOptions o = base_options(dir_);
  o.default_hooks = default_hooks_config("{logger: {interval: 2}}");
  SyntheticRegressionOptions d;
  d.num_samples = 64;
  auto data = std::make_shared<SyntheticRegression>(d);
  {
    TrainLog log(true, dir_ / "run", "x");
    torch::manual_seed(3);
    Runner runner(o, RunContext{}, std::make_shared<TwoLossRegressor>(), data, nullptr, nullptr,
                  log);
    runner.train();
  }
  std::ifstream in(dir_ / "run" / "vis_data" / "scalars.json");
  std::string line;
  int records = 0;
  while (std::getline(in, line)) {
    auto value = [&](const std::string& key) {
      const auto at = line.find("\"" + key + "\": ");
      EXPECT_NE(at, std::string::npos) << key << " missing in " << line;
      return std::stod(line.substr(at + key.size() + 4));
    };
    const double a = value("loss_a"), b = value("loss_b"), total = value("loss");
    EXPECT_NEAR(b, 3 * a + 1, 1e-6 * b) << line;
    EXPECT_NEAR(total, a + b, 1e-6 * total) << line;
    ++records;
  }
  EXPECT_EQ(records, 8);  // 2 epochs x 8 iterations, every 2nd logged
}

// The end of training: train_summary.json names the validation with the lowest mse (the toy
// metric's key) among those in scalars.json, and counts every sample trained.
TEST_F(RunnerTest, SummaryNamesTheBestValidationAndCountsSamples) {
  RunnerOptions o = base_options(dir_);
  o.train_cfg = train_loop_config("{max_epochs: 4}");
  o.val_loader = LoaderSpec{};
  o.val_loader->batch_size = 16;
  SyntheticRegressionOptions d;
  d.num_samples = 64;
  auto data = std::make_shared<SyntheticRegression>(d);
  {
    TrainLog log(true, dir_ / "run", "x");
    Runner runner(o, RunContext{}, fresh_model(), data, data, std::make_shared<RegressionMetric>(),
                  log);
    runner.train();
  }
  std::ifstream scalars(dir_ / "run" / "vis_data" / "scalars.json");
  std::vector<double> mse;
  for (std::string line; std::getline(scalars, line);) {
    const auto at = line.find("\"mse\": ");
    if (at != std::string::npos) mse.push_back(std::stod(line.substr(at + 7)));
  }
  ASSERT_EQ(mse.size(), 4U);
  const auto best = std::min_element(mse.begin(), mse.end()) - mse.begin() + 1;
  std::ifstream in(dir_ / "train_summary.json");
  const std::string json((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(json.find("\"samples\": 256,"), std::string::npos) << json;
  EXPECT_NE(json.find("\"epochs\": 4, \"iters\": 32"), std::string::npos) << json;
  EXPECT_NE(json.find("\"key_metric\": {\"name\": \"mse\", \"greater_is_better\": false}"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"best\": {\"epoch\": " + std::to_string(best) + ","), std::string::npos)
      << json << " mse per epoch: " << ::testing::PrintToString(mse);
}

// Records what the runner reports, as the Prometheus telemetry would receive it.
class RecordingTelemetry : public TrainTelemetry {
 public:
  void on_start(std::int64_t planned_iters) override { planned.push_back(planned_iters); }
  void on_step(const StepRecord& step) override { steps.push_back(step); }
  void on_loss(double mean_loss) override { losses.push_back(mean_loss); }
  std::vector<StepRecord> steps;
  std::vector<double> losses;
  std::vector<std::int64_t> planned;
};

TEST_F(RunnerTest, TelemetrySeesEveryIterationAndTheWindowLoss) {
  RunnerOptions o = base_options(dir_);
  o.default_hooks = default_hooks_config("{logger: {interval: 4}}");
  o.train_loader.batch_size = 16;  // 60 samples: 3 full batches + one of 12 per epoch
  SyntheticRegressionOptions d;
  d.num_samples = 60;
  auto data = std::make_shared<SyntheticRegression>(d);
  RecordingTelemetry telemetry;
  {
    TrainLog log(true, dir_ / "run", "x");
    Runner runner(o, RunContext{}, fresh_model(), data, nullptr, nullptr, log);
    runner.set_telemetry(&telemetry);
    runner.train();
  }
  ASSERT_EQ(telemetry.steps.size(), 8u);                       // 2 epochs x 4 iterations
  EXPECT_EQ(telemetry.planned, std::vector<std::int64_t>{8});  // announced before the first
  for (std::size_t i = 0; i < telemetry.steps.size(); ++i) {
    const StepRecord& s = telemetry.steps[i];
    EXPECT_EQ(s.epoch, i < 4 ? 1 : 2);
    EXPECT_EQ(s.samples, i % 4 == 3 ? 12 : 16) << i;  // the last batch is short
    EXPECT_GT(s.step_seconds, 0.0);
    EXPECT_DOUBLE_EQ(s.lr, 0.05);
    EXPECT_FALSE(s.allreduce_seconds.has_value());  // one process: nothing to wait for
  }
  // One loss per logging window (every 4th iteration = once per epoch), equal to the loss
  // the log wrote (one process: its own mean is the logged mean).
  ASSERT_EQ(telemetry.losses.size(), 2u);
  std::ifstream in(dir_ / "run" / "vis_data" / "scalars.json");
  std::string line;
  std::vector<double> logged;
  while (std::getline(in, line)) {
    const auto at = line.find("\"loss\": ");
    if (at != std::string::npos) logged.push_back(std::stod(line.substr(at + 8)));
  }
  ASSERT_EQ(logged.size(), 2u);
  for (std::size_t k = 0; k < 2; ++k) EXPECT_NEAR(telemetry.losses[k], logged[k], 1e-6 * logged[k]);
  EXPECT_LT(telemetry.losses[1], telemetry.losses[0]);  // it trains
}

// Counts training iterations, standing in for a hook registered outside the engine.
class IterationCounter final : public Hook {
 public:
  explicit IterationCounter(int* count) : count_(count) {}
  void after_train_iter(LoopContext& /*loop*/, TrainIter& /*iter*/) override { ++*count_; }

 private:
  int* count_;
};

bool same_weights(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!at::equal(a[i], b[i])) return false;
  }
  return true;
}

// default_hooks is built by the registry: a key names any registered hook in place of the
// standard one, and null turns one off (without param_scheduler a warm-up changes nothing).
TEST_F(RunnerTest, ADefaultHookIsReplacedOrTurnedOffFromConfig) {
  static int iterations = 0;
  [[maybe_unused]] static const bool registered = [] {
    components::register_builtin_components();
    config::component_schemas().add("hook", "IterationCounterHook", {});
    hook_registry().add(
        "IterationCounterHook",
        [](const config::Config& /*cfg*/, const HookBuildContext& /*ctx*/) {
          return std::make_shared<IterationCounter>(&iterations);
        },
        HookPriority::kNormal);
    return true;
  }();
  const RunnerOptions plain = base_options(dir_);  // 64 samples, batch 8, 2 epochs: 16 iters
  RunnerOptions warm = plain;
  warm.schedule.push_back(SchedulePhase{std::make_shared<LinearRule>(0.1, 1.0), ScheduledParam::kLr,
                                        false, false, 0, 10, "warm-up"});
  RunnerOptions off = warm;
  off.default_hooks = default_hooks_config(
      "{timer: {type: IterationCounterHook}, param_scheduler: null, logger: {interval: 1000}}");
  const std::vector<at::Tensor> constant_lr = train(plain, fresh_model());
  const std::vector<at::Tensor> warmed_up = train(warm, fresh_model());
  iterations = 0;
  const std::vector<at::Tensor> scheduler_off = train(off, fresh_model());
  EXPECT_EQ(iterations, 16);
  EXPECT_FALSE(same_weights(constant_lr, warmed_up));
  EXPECT_TRUE(same_weights(constant_lr, scheduler_off));
  // A type nobody registered is refused by the schema, naming the key.
  try {
    default_hooks_config("{logger: {type: NoSuchHook}}");
    FAIL() << "expected a ConfigError";
  } catch (const config::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("default_hooks.logger.type"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace ddp3d::engine
