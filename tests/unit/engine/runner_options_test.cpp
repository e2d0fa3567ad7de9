// runner_options_from_config reads every option from the loaded config, whose missing keys the
// schema filled in: the schema's defaults are the only defaults. RunnerOptions' member
// initialisers exist for tests that build options directly; they must say the same.
#include "worker/engine/runner_options.h"

#include <gtest/gtest.h>
#include <torch/optim/sgd.h>

#include <fstream>
#include <memory>
#include <string>

#include "tests/support/subprocess.h"
#include "worker/components/builtin_components.h"
#include "worker/config/config.h"
#include "worker/engine/amp_optim_wrapper.h"
#include "worker/engine/hook_registry.h"
#include "worker/engine/model.h"
#include "worker/engine/optim_wrapper_registry.h"
#include "worker/engine/optim_wrapper_schemas.h"
#include "worker/engine/optimizer_registry.h"
#include "worker/engine/optimizer_schemas.h"
#include "worker/engine/param_scheduler_registry.h"
#include "worker/engine/param_scheduler_schemas.h"
#include "worker/engine/schedule_rules.h"
#include "worker/engine/train_loop_registry.h"

namespace ddp3d::engine {
namespace {

// A config with only the keys the schema requires, set to RunnerOptions' own values.
// `optim_wrapper` replaces the optimizer mapping's body; `extra` adds top-level keys.
std::filesystem::path write_minimal_config(const std::string& optim_wrapper,
                                           const std::string& extra) {
  const std::string dir = ddp3d::testing::make_temp_dir("ddp3d-runner-options-");
  std::filesystem::path path = dir + "/minimal.yaml";
  std::ofstream(path)
      << "model: {type: ToyRegressor, in_features: 2, hidden: [4], out_features: 1}\n"
         "train_dataloader:\n"
         "  batch_size: 1\n"
         "  dataset: {type: SyntheticRegression, num_samples: 4}\n"
         "optim_wrapper:\n"
      << optim_wrapper << "train_cfg: {max_epochs: 1}\n"
      << extra;
  return path;
}

class RunnerOptionsTest : public ::testing::Test {
 protected:
  void TearDown() override {
    for (const auto& p : paths_) std::filesystem::remove_all(p.parent_path());
  }
  void SetUp() override { components::register_builtin_schemas(); }
  RunnerOptions load(const std::string& optim_wrapper = "  optimizer: {type: AdamW, lr: 0.001}\n",
                     const std::string& extra = "") {
    paths_.push_back(write_minimal_config(optim_wrapper, extra));
    return runner_options_from_config(config::load(paths_.back()));
  }
  std::vector<std::filesystem::path> paths_;
};

TEST_F(RunnerOptionsTest, MemberDefaultsAreTheSchemaDefaults) {
  const RunnerOptions got = load();
  const RunnerOptions def;
  EXPECT_EQ(got.train_cfg.get<std::string>("type"), "EpochBasedTrainLoop");
  const ValidationRule val = validation_rule(got.train_cfg);
  const ValidationRule val_def;
  EXPECT_EQ(val.interval, val_def.interval);
  EXPECT_EQ(val.begin, val_def.begin);
  EXPECT_EQ(got.optim_wrapper.get<std::string>("type"), "OptimWrapper");
  const OptimWrapperOptions ow = optim_wrapper_options(got.optim_wrapper, 1);
  const OptimWrapperOptions ow_def;
  EXPECT_EQ(ow.optimizer.type, ow_def.optimizer.type);
  EXPECT_EQ(ow.optimizer.lr, ow_def.optimizer.lr);
  EXPECT_EQ(ow.optimizer.weight_decay, ow_def.optimizer.weight_decay);
  EXPECT_EQ(ow.optimizer.beta1, ow_def.optimizer.beta1);
  EXPECT_EQ(ow.optimizer.beta2, ow_def.optimizer.beta2);
  EXPECT_EQ(ow.optimizer.eps, ow_def.optimizer.eps);
  EXPECT_EQ(ow.optimizer.amsgrad, ow_def.optimizer.amsgrad);
  EXPECT_FALSE(ow.clip_max_norm.has_value());
  EXPECT_EQ(ow.accumulative_counts, ow_def.accumulative_counts);
  EXPECT_TRUE(got.schedule.empty());
  EXPECT_EQ(got.train_loader.batch_size, def.train_loader.batch_size);
  EXPECT_EQ(got.train_loader.num_workers, def.train_loader.num_workers);
  EXPECT_EQ(got.train_loader.shuffle, def.train_loader.shuffle);
  EXPECT_EQ(got.train_loader.drop_last, def.train_loader.drop_last);
  EXPECT_FALSE(got.train_loader.seed.has_value());
  EXPECT_FALSE(got.val_loader.has_value());
  // Options built in code take default_hooks from the same schema.
  EXPECT_FALSE(def.default_hooks.has_value());
  ASSERT_TRUE(got.default_hooks.has_value());
  EXPECT_EQ(got.default_hooks->dump_yaml(), default_hooks_config().dump_yaml());
  EXPECT_EQ(got.find_unused_parameters, def.find_unused_parameters);
  EXPECT_EQ(got.bucket_cap_mb, def.bucket_cap_mb);
  EXPECT_EQ(got.first_bucket_cap_mb, def.first_bucket_cap_mb);
  EXPECT_EQ(got.broadcast_buffers, def.broadcast_buffers);
  EXPECT_EQ(got.resume, def.resume);
}

TEST_F(RunnerOptionsTest, SgdAndClippingDefaultsAreTheSchemas) {
  const RunnerOptions got = load(
      "  optimizer: {type: SGD, lr: 0.001}\n"
      "  clip_grad: {max_norm: 10}\n");
  const OptimizerSpec def;
  const OptimWrapperOptions ow = optim_wrapper_options(got.optim_wrapper, 1);
  EXPECT_EQ(ow.optimizer.type, "SGD");
  EXPECT_EQ(ow.optimizer.momentum, def.momentum);
  EXPECT_EQ(ow.optimizer.dampening, def.dampening);
  EXPECT_EQ(ow.optimizer.nesterov, def.nesterov);
  ASSERT_TRUE(ow.clip_max_norm.has_value());
  EXPECT_EQ(*ow.clip_max_norm, 10.0);
  EXPECT_EQ(ow.clip_norm_type, OptimWrapperOptions{}.clip_norm_type);
}

TEST_F(RunnerOptionsTest, EachScheduleKindReadsItsOwnKeysWithTheSchemasDefaults) {
  const RunnerOptions got = load("  optimizer: {type: AdamW, lr: 0.001}\n",
                                 "param_scheduler:\n"
                                 "  - {type: LinearLR, end: 5}\n"
                                 "  - {type: StepLR, step_size: 3}\n"
                                 "  - {type: MultiStepLR, milestones: [2, 4]}\n"
                                 "  - {type: ConstantLR}\n"
                                 "  - {type: CosineAnnealingMomentum, T_max: 7}\n");
  ASSERT_EQ(got.schedule.size(), 5U);
  const SchedulePhase def;
  // Each rule's behaviour shows its keys: the schema's defaults where the config is silent.
  const auto* linear = dynamic_cast<const LinearRule*>(got.schedule[0].rule.get());
  ASSERT_NE(linear, nullptr);
  EXPECT_DOUBLE_EQ(linear->step(1.0, 0, 1.0, 4), 1.0 / 3);  // start_factor
  EXPECT_EQ(got.schedule[0].end, 5.0);
  const auto* step = dynamic_cast<const StepRule*>(got.schedule[1].rule.get());
  ASSERT_NE(step, nullptr);
  EXPECT_DOUBLE_EQ(step->step(1.0, 2, 1.0, 10), 1.0);
  EXPECT_DOUBLE_EQ(step->step(1.0, 3, 1.0, 10), 0.1);  // step_size 3, gamma 0.1
  const auto* multi = dynamic_cast<const MultiStepRule*>(got.schedule[2].rule.get());
  ASSERT_NE(multi, nullptr);
  EXPECT_DOUBLE_EQ(multi->step(1.0, 2, 1.0, 10), 0.1);
  EXPECT_DOUBLE_EQ(multi->step(1.0, 3, 1.0, 10), 1.0);
  EXPECT_DOUBLE_EQ(multi->step(1.0, 4, 1.0, 10), 0.1);
  const auto* constant = dynamic_cast<const ConstantRule*>(got.schedule[3].rule.get());
  ASSERT_NE(constant, nullptr);
  EXPECT_DOUBLE_EQ(constant->step(1.0, 0, 1.0, 10), 1.0 / 3);  // factor
  EXPECT_EQ(got.schedule[4].param, ScheduledParam::kMomentum);
  const auto* cosine = dynamic_cast<const CosineAnnealingRule*>(got.schedule[4].rule.get());
  ASSERT_NE(cosine, nullptr);
  EXPECT_NEAR(cosine->step(0.5, 7, 1.0, 10), 0.0, 1e-12);  // T_max 7 reaches eta_min 0
  for (const SchedulePhase& p : got.schedule) {
    EXPECT_EQ(p.by_epoch, def.by_epoch) << p.name;
    EXPECT_EQ(p.begin, def.begin) << p.name;
    EXPECT_EQ(p.convert_to_iter_based, def.convert_to_iter_based) << p.name;
  }
}

// Halves the value at every step after the first: a rule no built-in scheduler has.
class HalvingRule : public ScheduleRule {
 public:
  double step(double v, double t, double, double) const override { return t == 0 ? v : v / 2; }
  std::shared_ptr<const ScheduleRule> in_iterations(double) const override {
    return std::make_shared<HalvingRule>();
  }
};

// An optimizer and a scheduler this test registers (keys and factory, nothing else) are built
// from config like the built-in ones, reading keys of their own.
TEST_F(RunnerOptionsTest, AnOptimizerAndASchedulerRegisteredOutsideTheEngineComeFromConfig) {
  static const bool registered = [] {
    using S = config::Schema;
    config::component_schemas().add(
        "optimizer", "ScaledSGD",
        optimizer_fields({{"scale", S::number().min(0, true).required()}}));
    OptimizerType scaled;
    scaled.read = [](const config::Config&, OptimizerSpec&) {};
    scaled.make = [](std::vector<at::Tensor> params, const OptimizerSpec& s) {
      const double lr = s.lr * s.node.get<double>("scale");
      return std::unique_ptr<torch::optim::Optimizer>(
          std::make_unique<torch::optim::SGD>(std::move(params), torch::optim::SGDOptions(lr)));
    };
    optimizer_registry().add("ScaledSGD", scaled);
    config::component_schemas().add("param_scheduler", "HalvingLR", param_scheduler_fields({}));
    param_scheduler_registry().add("HalvingLR", [](const config::Config& node) {
      return schedule_phase(node, ScheduledParam::kLr, std::make_shared<HalvingRule>());
    });
    return true;
  }();
  ASSERT_TRUE(registered);
  const RunnerOptions got = load("  optimizer: {type: ScaledSGD, lr: 0.1, scale: 3}\n",
                                 "param_scheduler: [{type: HalvingLR, by_epoch: false}]\n");
  const OptimizerSpec spec = optimizer_spec(got.optim_wrapper.node("optimizer"));
  EXPECT_EQ(spec.type, "ScaledSGD");
  at::Tensor w = at::zeros({2});
  const auto optimizer = optimizer_registry().at("ScaledSGD").make({w}, spec);
  EXPECT_DOUBLE_EQ(optimizer->param_groups()[0].options().get_lr(), 0.1 * 3);
  ASSERT_EQ(got.schedule.size(), 1U);
  const ParamSchedule schedule(got.schedule, 4);
  EXPECT_DOUBLE_EQ(schedule.value(ScheduledParam::kLr, 1.0, 3), 0.125);
  // A type nobody registered is a config error naming the key.
  try {
    load("  optimizer: {type: Lion, lr: 0.1}\n");
    FAIL() << "expected a ConfigError";
  } catch (const config::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("optim_wrapper.optimizer.type"), std::string::npos)
        << e.what();
  }
}

// One parameter, for a wrapper to update.
class OneParameter : public Model {
 public:
  OneParameter() { w = register_parameter("w", at::ones({1})); }
  LossMap forward_train(const Batch& /*batch*/) override { return {}; }
  std::vector<Sample> predict(const Batch& /*batch*/) override { return {}; }
  at::Tensor w;
};

// A wrapper from outside the engine: skips every step while `frozen`, a key of its own.
class FreezableOptimWrapper : public OptimWrapper {
 public:
  FreezableOptimWrapper(Model& model, const OptimWrapperOptions& options, bool frozen)
      : OptimWrapper(model, options), frozen(frozen) {}
  const bool frozen;

 protected:
  bool prepare_step(UpdateResult& /*result*/) override { return !frozen; }
};

// optim_wrapper names a registered wrapper: the built-in two, or one registered outside the
// engine (its keys after the common ones, and a factory), which then drives the update.
TEST_F(RunnerOptionsTest, AnOptimWrapperRegisteredOutsideTheEngineComesFromConfig) {
  static const bool registered = [] {
    using S = config::Schema;
    config::component_schemas().add("optim_wrapper", "FreezableOptimWrapper",
                                    optim_wrapper_fields({{"frozen", S::boolean().def(false)}}));
    optim_wrapper_registry().add("FreezableOptimWrapper", [](const config::Config& node,
                                                             const OptimWrapperBuildContext& ctx) {
      return std::make_shared<FreezableOptimWrapper>(
          ctx.model, optim_wrapper_options(node, ctx.max_iters), node.get<bool>("frozen"));
    });
    return true;
  }();
  ASSERT_TRUE(registered);
  OneParameter model;
  const auto build = [&](const std::string& body) {
    const RunnerOptions got = load(body);
    return optim_wrapper_registry().build(
        got.optim_wrapper,
        OptimWrapperBuildContext{.model = model, .max_iters = 2, .device = c10::kCPU});
  };
  const auto frozen =
      build("  type: FreezableOptimWrapper\n  frozen: true\n  optimizer: {type: SGD, lr: 0.5}\n");
  ASSERT_NE(dynamic_cast<FreezableOptimWrapper*>(frozen.get()), nullptr);
  EXPECT_FALSE(frozen->update_params((model.w * 2).sum(), 0).stepped);
  EXPECT_FLOAT_EQ(model.w.item<float>(), 1.0f);
  const auto thawed = build("  type: FreezableOptimWrapper\n  optimizer: {type: SGD, lr: 0.5}\n");
  EXPECT_TRUE(thawed->update_params((model.w * 2).sum(), 0).stepped);
  EXPECT_FLOAT_EQ(model.w.item<float>(), 1.0f - 0.5f * 2.0f);

  // The built-in mixed-precision wrapper: bfloat16 scales nothing, so it runs on CPU.
  const auto amp =
      build("  type: AmpOptimWrapper\n  dtype: bfloat16\n  optimizer: {type: SGD, lr: 0.5}\n");
  ASSERT_NE(dynamic_cast<AmpOptimWrapper*>(amp.get()), nullptr);
  EXPECT_DOUBLE_EQ(amp->loss_scale_state().scale, 0.0);
  // float16 scales the loss, which needs CUDA: a CPU model is refused when the wrapper is built
  // (options made in code never pass the session's check before the process group).
  try {
    build("  type: AmpOptimWrapper\n  dtype: float16\n  optimizer: {type: SGD, lr: 0.5}\n");
    ADD_FAILURE() << "float16 on a CPU model was built";
  } catch (const config::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("optim_wrapper.dtype: AmpOptimWrapper with float16 (loss "
                                         "scaling) needs CUDA, but this rank runs on CPU (its "
                                         "model is on cpu)"),
              std::string::npos)
        << e.what();
  }

  // Each error names its key: a type nobody registered, and a key of another type.
  const auto error_of = [&](const std::string& body) {
    try {
      load(body);
    } catch (const config::ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error_of("  type: LarsOptimWrapper\n  optimizer: {type: SGD, lr: 0.5}\n")
                .find("optim_wrapper.type"),
            std::string::npos);
  EXPECT_NE(error_of("  dtype: bfloat16\n  optimizer: {type: SGD, lr: 0.5}\n")
                .find("optim_wrapper.dtype"),
            std::string::npos);
}

TEST_F(RunnerOptionsTest, SaveBestWithoutValidationIsAnErrorNamingTheKey) {
  try {
    load("  optimizer: {type: AdamW, lr: 0.001}\n",
         "default_hooks: {checkpoint: {save_best: auto}}\n");
    FAIL() << "expected a ConfigError";
  } catch (const config::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("default_hooks.checkpoint.save_best"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("val_dataloader"), std::string::npos) << e.what();
  }
  const RunnerOptions off = load();
  EXPECT_FALSE(off.default_hooks->has("checkpoint.save_best"));
}

}  // namespace
}  // namespace ddp3d::engine
