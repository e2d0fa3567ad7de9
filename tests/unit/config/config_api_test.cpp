// The typed access API the engine and models use.
#include <gtest/gtest.h>

#include "tests/unit/config/temp_dir.h"

namespace ddp3d::config {
namespace {

using testing::error_of;
using testing::kToyConfig;

const char* kText =
    "model: {type: ToyRegressor, in_features: 4, hidden: [8, 4]}\n"
    "train_dataloader:\n"
    "  batch_size: 8\n"
    "  dataset: {type: SyntheticRegression, num_samples: 64, noise: 0.5}\n"
    "optim_wrapper:\n"
    "  optimizer: {type: AdamW, lr: 0.001}\n"
    "param_scheduler:\n"
    "  - {type: LinearLR, start_factor: 0.1, by_epoch: false, end: 10}\n"
    "  - {type: StepLR, step_size: 2}\n"
    "train_cfg: {max_epochs: 2}\n";

TEST(ConfigApi, TypedGet) {
  const Config cfg = parse(kText, "api.yaml");
  EXPECT_EQ(cfg.get<int>("model.in_features"), 4);
  EXPECT_EQ(cfg.get<std::int64_t>("train_dataloader.batch_size"), 8);
  EXPECT_DOUBLE_EQ(cfg.get<double>("optim_wrapper.optimizer.lr"), 0.001);
  EXPECT_FLOAT_EQ(cfg.get<float>("train_dataloader.dataset.noise"), 0.5f);
  EXPECT_EQ(cfg.get<std::string>("optim_wrapper.optimizer.type"), "AdamW");
  EXPECT_EQ(cfg.get<std::vector<std::int64_t>>("model.hidden"), (std::vector<std::int64_t>{8, 4}));
  EXPECT_EQ(cfg.get<std::string>("param_scheduler.1.type"), "StepLR");
  // An integer reads as a double; a double never reads as an integer.
  EXPECT_DOUBLE_EQ(cfg.get<double>("model.in_features"), 4.0);
  EXPECT_NE(error_of([&] {
              cfg.get<int>("optim_wrapper.optimizer.lr");
            }).find("api.yaml:6: optim_wrapper.optimizer.lr: expected an integer, got 0.001"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              cfg.get<std::string>("model.in_features");
            }).find("model.in_features: expected a string, got 4"),
            std::string::npos);
}

TEST(ConfigApi, SchemaDefaultsAreFilledIn) {
  const Config cfg = parse(kText, "api.yaml");
  EXPECT_EQ(cfg.get<std::vector<double>>("optim_wrapper.optimizer.betas"),
            (std::vector<double>{0.9, 0.999}));
  EXPECT_DOUBLE_EQ(cfg.get<double>("optim_wrapper.optimizer.weight_decay"), 0.0);
  EXPECT_EQ(cfg.get<std::string>("optim_wrapper.type"), "OptimWrapper");
  EXPECT_FALSE(cfg.get<bool>("ddp.find_unused_parameters"));
  EXPECT_DOUBLE_EQ(cfg.get<double>("ddp.bucket_cap_mb"), 25.0);
  EXPECT_TRUE(cfg.get<bool>("ddp.broadcast_buffers"));
  EXPECT_EQ(cfg.get<int>("default_hooks.logger.interval"), 50);
  EXPECT_EQ(cfg.get<int>("train_cfg.val_interval"), 1);
  EXPECT_TRUE(cfg.get<bool>("train_dataloader.sampler.shuffle"));
  EXPECT_EQ(cfg.get<std::string>("env_cfg.dist_cfg.backend"), "auto");
  EXPECT_EQ(cfg.origin("ddp.bucket_cap_mb"), "<schema default>");
  // Nullable keys default to null: absent for has() and get_or().
  EXPECT_FALSE(cfg.has("randomness.seed"));
  EXPECT_EQ(cfg.get_or<int>("randomness.seed", 42), 42);
  EXPECT_FALSE(cfg.has("optim_wrapper.clip_grad"));
  EXPECT_NE(error_of([&] { cfg.get<int>("randomness.seed"); }).find("randomness.seed: is null"),
            std::string::npos);
  // Optional keys without a default stay absent.
  EXPECT_FALSE(cfg.has("param_scheduler.0.eta_min"));
  EXPECT_FALSE(cfg.has("train_cfg.max_iters"));
}

TEST(ConfigApi, GetOrFallsBackOnlyWhenMissing) {
  const Config cfg = parse(kText, "api.yaml");
  EXPECT_EQ(cfg.get_or<int>("train_cfg.max_iters", 100), 100);
  EXPECT_EQ(cfg.get_or<int>("train_cfg.max_epochs", 100), 2);
  EXPECT_EQ(cfg.get_or<std::string>("no.such.key", "x"), "x");
  EXPECT_NE(error_of([&] {
              cfg.get_or<bool>("train_cfg.max_epochs", false);
            }).find("train_cfg.max_epochs: expected true or false, got 2"),
            std::string::npos);
}

TEST(ConfigApi, MissingKeyNamesTheFullPath) {
  const Config cfg = parse(kText, "api.yaml");
  const Config opt = cfg.node("optim_wrapper.optimizer");
  EXPECT_EQ(opt.path(), "optim_wrapper.optimizer");
  const std::string msg = error_of([&] { opt.get<double>("momentum"); });
  EXPECT_NE(msg.find("api.yaml: optim_wrapper.optimizer.momentum: missing key"), std::string::npos)
      << msg;
}

TEST(ConfigApi, NodesListsAndKeys) {
  const Config cfg = parse(kText, "api.yaml");
  const Config model = cfg.node("model");
  EXPECT_TRUE(model.is_map());
  EXPECT_EQ(model.get<int>("in_features"), 4);
  EXPECT_EQ(model.keys(), (std::vector<std::string>{"type", "in_features", "hidden", "out_features",
                                                    "unused_branch"}));
  const std::vector<Config> phases = cfg.list("param_scheduler");
  ASSERT_EQ(phases.size(), 2u);
  EXPECT_EQ(phases[0].path(), "param_scheduler.0");
  EXPECT_EQ(phases[0].get<std::string>("type"), "LinearLR");
  EXPECT_FALSE(phases[0].get<bool>("by_epoch"));
  EXPECT_TRUE(phases[1].get<bool>("by_epoch"));  // schema default
  EXPECT_EQ(phases[1].origin("type"), "api.yaml:9");
  EXPECT_TRUE(cfg.node("model.hidden").is_list());
  EXPECT_EQ(cfg.node("model.hidden").size(), 2u);
  EXPECT_TRUE(cfg.node("model.in_features").is_scalar());
  EXPECT_NE(error_of([&] { cfg.list("model"); }).find("model: expected a list, got a mapping"),
            std::string::npos);
  EXPECT_EQ(cfg.file(), "api.yaml");
}

TEST(ConfigApi, DumpReloadsToTheSameConfig) {
  testing::TempDir dir;
  dir.write("base.yaml", kText);
  const Config cfg =
      load(dir.write("x.yaml", "_base_: base.yaml\nwork_dir: \"123\"\n"), {"ddp.bucket_cap_mb=8"});
  const std::string dumped = cfg.dump_yaml();
  EXPECT_EQ(dumped.find("_base_"), std::string::npos);
  const Config again = parse(dumped, "dump.yaml");
  EXPECT_EQ(again.dump_yaml(), dumped);
  EXPECT_EQ(again.get<std::string>("work_dir"), "123");  // stayed a string
  EXPECT_DOUBLE_EQ(again.get<double>("ddp.bucket_cap_mb"), 8.0);
  EXPECT_EQ(cfg.node("model").dump_yaml().substr(0, 18), "type: ToyRegressor");
}

TEST(ConfigApi, SingleMappingBecomesAListOfOne) {
  const Config cfg = parse(
      std::string(kToyConfig) + "param_scheduler: {type: StepLR, step_size: 3}\n", "one.yaml");
  ASSERT_TRUE(cfg.node("param_scheduler").is_list());
  EXPECT_EQ(cfg.get<int>("param_scheduler.0.step_size"), 3);
}

}  // namespace
}  // namespace ddp3d::config
