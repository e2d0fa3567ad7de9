// Every shipped config loads and validates, carries mmdet3d's values where it mirrors mmdet3d,
// and docs/configs.md holds the reference generated from the schema.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "tests/support/subprocess.h"
#include "worker/config/config.h"
#include "worker/config/schema.h"

namespace ddp3d::config {
namespace {

namespace fs = std::filesystem;

fs::path source_dir() {
  return ::ddp3d::testing::source_path(".");
}

Config shipped(const std::string& relative) {
  return load(source_dir() / "configs" / relative);
}

TEST(ShippedConfigs, AllLoadAndValidate) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(source_dir() / "configs")) {
    const fs::path rel = fs::relative(entry.path(), source_dir() / "configs");
    if (*rel.begin() == "_base_" || entry.path().extension() != ".yaml") continue;
    files.push_back(entry.path());
  }
  ASSERT_GE(files.size(), 4u);
  for (const fs::path& f : files) {
    try {
      const Config cfg = load(f);
      EXPECT_TRUE(cfg.has("model.type")) << f;
    } catch (const ConfigError& e) {
      ADD_FAILURE() << e.what();
    }
  }
}

TEST(ShippedConfigs, CarConfigHasMmdet3dValues) {
  const Config cfg = shipped("pointpillars/pointpillars_hv_secfpn_8xb6-160e_kitti-3d-car.yaml");
  EXPECT_EQ(cfg.get<std::vector<double>>("model.data_preprocessor.voxel_layer.point_cloud_range"),
            (std::vector<double>{0, -39.68, -3, 69.12, 39.68, 1}));
  EXPECT_EQ(cfg.get<std::vector<double>>("model.data_preprocessor.voxel_layer.voxel_size"),
            (std::vector<double>{0.16, 0.16, 4}));
  EXPECT_EQ(cfg.get<std::vector<int>>("model.data_preprocessor.voxel_layer.max_voxels"),
            (std::vector<int>{16000, 40000}));
  EXPECT_EQ(cfg.get<std::vector<int>>("model.middle_encoder.output_shape"),
            (std::vector<int>{496, 432}));
  EXPECT_EQ(cfg.get<std::vector<int>>("model.backbone.layer_nums"), (std::vector<int>{3, 5, 5}));
  EXPECT_EQ(cfg.get<int>("model.bbox_head.num_classes"), 1);
  // `_delete_` replaced the 3-class anchors and assigners.
  EXPECT_EQ(cfg.get<std::vector<std::vector<double>>>("model.bbox_head.anchor_generator.sizes"),
            (std::vector<std::vector<double>>{{3.9, 1.6, 1.56}}));
  EXPECT_FALSE(cfg.has("model.bbox_head.anchor_generator.bottom_heights"));
  ASSERT_EQ(cfg.list("model.train_cfg.assigner").size(), 1u);
  EXPECT_DOUBLE_EQ(cfg.get<double>("model.train_cfg.assigner.0.pos_iou_thr"), 0.6);
  EXPECT_DOUBLE_EQ(cfg.get<double>("model.bbox_head.loss_bbox.beta"), 1.0 / 9.0);
  EXPECT_DOUBLE_EQ(cfg.get<double>("model.bbox_head.loss_dir.loss_weight"), 0.2);
  // Schedule: the 3-class config's PointPillars settings over cyclic-40e.
  EXPECT_EQ(cfg.get<std::string>("optim_wrapper.optimizer.type"), "AdamW");
  EXPECT_DOUBLE_EQ(cfg.get<double>("optim_wrapper.optimizer.lr"), 0.001);
  EXPECT_EQ(cfg.get<std::vector<double>>("optim_wrapper.optimizer.betas"),
            (std::vector<double>{0.95, 0.99}));
  EXPECT_DOUBLE_EQ(cfg.get<double>("optim_wrapper.clip_grad.max_norm"), 35.0);
  EXPECT_EQ(cfg.get<int>("train_cfg.max_epochs"), 80);
  EXPECT_EQ(cfg.get<int>("train_dataloader.batch_size"), 6);
  EXPECT_EQ(cfg.get<int>("train_dataloader.dataset.times"), 2);
  EXPECT_EQ(cfg.get<std::vector<std::string>>("train_dataloader.dataset.dataset.metainfo.classes"),
            (std::vector<std::string>{"Car"}));
  EXPECT_EQ(cfg.get<std::vector<std::string>>("val_dataloader.dataset.metainfo.classes"),
            (std::vector<std::string>{"Car"}));
  const std::vector<Config> phases = cfg.list("param_scheduler");
  ASSERT_EQ(phases.size(), 4u);
  EXPECT_DOUBLE_EQ(phases[1].get<double>("eta_min"), 1e-7);
  EXPECT_DOUBLE_EQ(phases[1].get<double>("end"), 80);
}

TEST(ShippedConfigs, ThreeClassConfigHasPerClassAnchorsAndAssigners) {
  const Config cfg = shipped("pointpillars/pointpillars_hv_secfpn_8xb6-160e_kitti-3d-3class.yaml");
  EXPECT_EQ(cfg.get<int>("model.bbox_head.num_classes"), 3);
  EXPECT_EQ(cfg.list("model.bbox_head.anchor_generator.ranges").size(), 3u);
  const std::vector<Config> assigners = cfg.list("model.train_cfg.assigner");
  ASSERT_EQ(assigners.size(), 3u);
  EXPECT_DOUBLE_EQ(assigners[0].get<double>("pos_iou_thr"), 0.5);   // Pedestrian
  EXPECT_DOUBLE_EQ(assigners[1].get<double>("neg_iou_thr"), 0.35);  // Cyclist
  EXPECT_DOUBLE_EQ(assigners[2].get<double>("pos_iou_thr"), 0.6);   // Car
  EXPECT_EQ(cfg.get<std::vector<std::string>>("train_dataloader.dataset.dataset.metainfo.classes"),
            (std::vector<std::string>{"Pedestrian", "Cyclist", "Car"}));
  EXPECT_EQ(cfg.get<int>("train_cfg.val_interval"), 2);
  EXPECT_EQ(cfg.get<int>("default_hooks.checkpoint.interval"), 1);
  EXPECT_EQ(cfg.get<int>("default_hooks.checkpoint.max_keep_ckpts"), 3);
}

TEST(ShippedConfigs, DemoConfigIsSmallAndConsistent) {
  const Config cfg = shipped("pointpillars/pointpillars_demo_synthetic_car.yaml");
  const auto range =
      cfg.get<std::vector<double>>("model.data_preprocessor.voxel_layer.point_cloud_range");
  const auto voxel = cfg.get<std::vector<double>>("model.data_preprocessor.voxel_layer.voxel_size");
  const auto shape = cfg.get<std::vector<int>>("model.middle_encoder.output_shape");
  // The BEV grid matches range / voxel size ([ny, nx]).
  EXPECT_EQ(shape[0], static_cast<int>(std::lround((range[4] - range[1]) / voxel[1])));
  EXPECT_EQ(shape[1], static_cast<int>(std::lround((range[3] - range[0]) / voxel[0])));
  // The head sees the neck's concatenated channels.
  int neck_out = 0;
  for (int c : cfg.get<std::vector<int>>("model.neck.out_channels")) neck_out += c;
  EXPECT_EQ(cfg.get<int>("model.bbox_head.in_channels"), neck_out);
  EXPECT_EQ(cfg.get<std::string>("train_dataloader.dataset.type"), "SyntheticKitti");
  EXPECT_FALSE(cfg.has("train_dataloader.dataset.times"));  // `_delete_` dropped RepeatDataset
  EXPECT_EQ(cfg.get<std::string>("val_dataloader.dataset.split"), "val");
  EXPECT_LT(shape[0] * shape[1], 496 * 432 / 10);
}

TEST(ShippedConfigs, FullSizeGridMatchesRangeOverVoxel) {
  for (const char* name : {"pointpillars/pointpillars_hv_secfpn_8xb6-160e_kitti-3d-car.yaml",
                           "pointpillars/pointpillars_hv_secfpn_8xb6-160e_kitti-3d-3class.yaml"}) {
    const Config cfg = shipped(name);
    const auto range =
        cfg.get<std::vector<double>>("model.data_preprocessor.voxel_layer.point_cloud_range");
    const auto voxel =
        cfg.get<std::vector<double>>("model.data_preprocessor.voxel_layer.voxel_size");
    const auto shape = cfg.get<std::vector<int>>("model.middle_encoder.output_shape");
    EXPECT_EQ(shape[0], static_cast<int>(std::lround((range[4] - range[1]) / voxel[1]))) << name;
    EXPECT_EQ(shape[1], static_cast<int>(std::lround((range[3] - range[0]) / voxel[0]))) << name;
  }
}

TEST(ShippedConfigs, ToyConfig) {
  const Config cfg = shipped("toy/toy_regression_2proc.yaml");
  EXPECT_EQ(cfg.get<std::string>("model.type"), "ToyRegressor");
  EXPECT_EQ(cfg.get<std::string>("train_dataloader.dataset.type"), "SyntheticRegression");
  EXPECT_EQ(cfg.get<std::string>("env_cfg.dist_cfg.backend"), "gloo");
  EXPECT_FALSE(cfg.get<bool>("ddp.find_unused_parameters"));
}

TEST(Docs, ConfigsMdHoldsTheGeneratedSchemaReference) {
  std::ifstream in(source_dir() / "docs" / "configs.md");
  ASSERT_TRUE(in) << "docs/configs.md missing";
  std::ostringstream text;
  text << in.rdbuf();
  const std::string expected = schema_markdown(ddp3d_schema());
  EXPECT_NE(text.str().find(expected), std::string::npos)
      << "docs/configs.md is out of date: run\n"
         "  build/worker/config/ddp3d_config_tool docs --update docs/configs.md";
}

// A key every variant has with the same description is one row that applies whatever the
// variant; a key only some variants have, or that they describe differently, is one row each.
TEST(Docs, AKeyAllVariantsShareIsDescribedOnce) {
  using S = Schema;
  const Schema schema = S::map(
      {{"part",
        S::map({}).variants(
            {{"A",
              {{"lr", S::number().required().doc("rate")},
               {"a_only", S::boolean().def(true)},
               {"size", S::integer().def(1)}}},
             {"B", {{"lr", S::number().required().doc("rate")}, {"size", S::integer().def(2)}}}},
            "A")}});
  const std::string doc = schema_markdown(schema);
  const auto count = [&](const std::string& text) {
    std::size_t n = 0;
    for (std::size_t at = doc.find(text); at != std::string::npos; at = doc.find(text, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("| `part.lr` |  | number |"), 1U) << doc;
  EXPECT_EQ(count("`part.lr`"), 1U) << doc;
  EXPECT_EQ(count("| `part.a_only` | `part.type=A` |"), 1U) << doc;
  EXPECT_EQ(count("| `part.size` | `part.type=A` | int | `1` |"), 1U) << doc;
  EXPECT_EQ(count("| `part.size` | `part.type=B` | int | `2` |"), 1U) << doc;
}

}  // namespace
}  // namespace ddp3d::config
