// `--cfg-options a.b.c=value`: typed values, list indexing, and errors that name the option.
#include <gtest/gtest.h>

#include "tests/unit/config/temp_dir.h"

namespace ddp3d::config {
namespace {

using testing::error_of;
using testing::kToyConfig;

Config toy(const std::vector<std::string>& options) {
  return parse(kToyConfig, "toy.yaml", options);
}

TEST(CfgOptions, ValuesAreTypedAsYaml) {
  const Config cfg = toy({
      "optim_wrapper.optimizer.lr=0.001", "ddp.find_unused_parameters=true", "model.hidden=[16,8]",
      "work_dir=work_dirs/foo", "randomness.seed=7",
      "train_dataloader.dataset.noise=1",  // an int is a fine number
  });
  EXPECT_DOUBLE_EQ(cfg.get<double>("optim_wrapper.optimizer.lr"), 0.001);
  EXPECT_TRUE(cfg.get<bool>("ddp.find_unused_parameters"));
  EXPECT_EQ(cfg.get<std::vector<int>>("model.hidden"), (std::vector<int>{16, 8}));
  EXPECT_EQ(cfg.get<std::string>("work_dir"), "work_dirs/foo");
  EXPECT_EQ(cfg.get<int>("randomness.seed"), 7);
  EXPECT_DOUBLE_EQ(cfg.get<double>("train_dataloader.dataset.noise"), 1.0);
  EXPECT_EQ(cfg.origin("optim_wrapper.optimizer.lr"),
            "--cfg-options optim_wrapper.optimizer.lr=0.001");
}

TEST(CfgOptions, LaterOptionsWinAndMappingsMerge) {
  const Config cfg = toy({"optim_wrapper.optimizer.lr=0.5", "optim_wrapper.optimizer.lr=0.25",
                          "optim_wrapper.optimizer={momentum: 0.9}"});
  EXPECT_DOUBLE_EQ(cfg.get<double>("optim_wrapper.optimizer.lr"), 0.25);  // kept by the merge
  EXPECT_DOUBLE_EQ(cfg.get<double>("optim_wrapper.optimizer.momentum"), 0.9);
}

TEST(CfgOptions, NumericComponentIndexesAList) {
  const std::string text = std::string(kToyConfig) +
                           "param_scheduler:\n"
                           "  - {type: StepLR, step_size: 2}\n"
                           "  - {type: CosineAnnealingLR, T_max: 4, begin: 2}\n";
  const Config cfg =
      parse(text, "s.yaml", {"param_scheduler.1.T_max=10", "param_scheduler.0.by_epoch=false"});
  EXPECT_DOUBLE_EQ(cfg.get<double>("param_scheduler.1.T_max"), 10.0);
  EXPECT_FALSE(cfg.get<bool>("param_scheduler.0.by_epoch"));
  const std::string msg = error_of([&] { parse(text, "s.yaml", {"param_scheduler.5.T_max=1"}); });
  EXPECT_NE(msg.find("--cfg-options param_scheduler.5.T_max=1: param_scheduler.5: no such list "
                     "element (the list has 2)"),
            std::string::npos)
      << msg;
}

TEST(CfgOptions, AKeyTheSchemaKnowsMayBeAddedAnUnknownOneMayNot) {
  // `ddp` is absent from the toy config but part of the schema: fine.
  EXPECT_DOUBLE_EQ(toy({"ddp.bucket_cap_mb=5"}).get<double>("ddp.bucket_cap_mb"), 5.0);
  const std::string msg = error_of([&] { toy({"optim_wrapper.optimizer.lrr=0.1"}); });
  EXPECT_NE(msg.find("--cfg-options optim_wrapper.optimizer.lrr=0.1: optim_wrapper.optimizer.lrr: "
                     "unknown key (did you mean 'lr'?)"),
            std::string::npos)
      << msg;
}

TEST(CfgOptions, WrongTypeNamesTheOption) {
  const std::string msg = error_of([&] { toy({"train_cfg.max_epochs=ten"}); });
  EXPECT_NE(msg.find("--cfg-options train_cfg.max_epochs=ten: train_cfg.max_epochs: expected an "
                     "integer, got \"ten\""),
            std::string::npos)
      << msg;
}

TEST(CfgOptions, MalformedOptionsAreAllReported) {
  const std::string msg = error_of([&] { toy({"no_equals", "a..b=1", "model.in_features.x=1"}); });
  EXPECT_NE(msg.find("3 config errors"), std::string::npos) << msg;
  EXPECT_NE(msg.find("--cfg-options no_equals: expected KEY=VALUE"), std::string::npos) << msg;
  EXPECT_NE(msg.find("--cfg-options a..b=1: a..b: empty component in dotted key"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("--cfg-options model.in_features.x=1: model.in_features: cannot set a key "
                     "inside 4 (set at toy.yaml:1)"),
            std::string::npos)
      << msg;
}

}  // namespace
}  // namespace ddp3d::config
