// The config → options mapping (on the repository's PointPillars configs) and the engine
// adapter (registry build, forward_train and predict through engine::Batch).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "tests/support/subprocess.h"
#include "worker/config/config.h"
#include "worker/models/pointpillars/config.h"
#include "worker/models/pointpillars/engine_model.h"

namespace ddp3d::models {
namespace {

std::filesystem::path source_dir() {
  return ::ddp3d::testing::source_path(".");
}

config::Config load_model(const std::string& relative) {
  return config::load(source_dir() / relative).node("model");
}

TEST(PointPillarsConfig, CarConfigMatchesMmdet3dOptions) {
  const PointPillarsOptions got = pointpillars_options_from_config(
      load_model("configs/pointpillars/pointpillars_hv_secfpn_8xb6-160e_kitti-3d-car.yaml"));
  const PointPillarsOptions want = pointpillars_kitti_car_options();
  EXPECT_EQ(got.voxel_encoder.feat_channels, want.voxel_encoder.feat_channels);
  EXPECT_EQ(got.voxel_encoder.voxel_size, want.voxel_encoder.voxel_size);
  EXPECT_EQ(got.voxel_encoder.point_cloud_range, want.voxel_encoder.point_cloud_range);
  EXPECT_EQ(got.middle_encoder.output_shape, want.middle_encoder.output_shape);
  EXPECT_EQ(got.backbone.layer_nums, want.backbone.layer_nums);
  EXPECT_EQ(got.backbone.layer_strides, want.backbone.layer_strides);
  EXPECT_EQ(got.backbone.out_channels, want.backbone.out_channels);
  EXPECT_EQ(got.neck.upsample_strides, want.neck.upsample_strides);
  EXPECT_EQ(got.neck.out_channels, want.neck.out_channels);
  EXPECT_EQ(got.bbox_head.num_classes, 1);
  EXPECT_EQ(got.bbox_head.anchor_generator.ranges, want.bbox_head.anchor_generator.ranges);
  EXPECT_EQ(got.bbox_head.anchor_generator.sizes, want.bbox_head.anchor_generator.sizes);
  EXPECT_EQ(got.bbox_head.anchor_generator.rotations, want.bbox_head.anchor_generator.rotations);
  EXPECT_NEAR(got.bbox_head.dir_offset, -M_PI / 2, 1e-12);
  EXPECT_NEAR(got.bbox_head.loss_bbox.beta, 1.0 / 9.0, 1e-12);
  EXPECT_EQ(got.bbox_head.loss_bbox.loss_weight, 2.0);
  EXPECT_EQ(got.bbox_head.loss_dir.loss_weight, 0.2);
  EXPECT_EQ(got.bbox_head.loss_cls.gamma, 2.0);
  EXPECT_EQ(got.bbox_head.loss_cls.alpha, 0.25);
  ASSERT_EQ(got.train_cfg.assigner.size(), 1u);
  EXPECT_EQ(got.train_cfg.assigner[0].pos_iou_thr, 0.6);
  EXPECT_EQ(got.train_cfg.assigner[0].neg_iou_thr, 0.45);
  EXPECT_EQ(got.train_cfg.assigner[0].min_pos_iou, 0.45);
  EXPECT_EQ(got.test_cfg.nms_pre, 100);
  EXPECT_EQ(got.test_cfg.max_num, 50);
  EXPECT_EQ(got.test_cfg.score_thr, 0.1);
  EXPECT_EQ(got.test_cfg.nms_thr, 0.01);
}

TEST(PointPillarsConfig, ThreeClassConfigHasPerClassAssigners) {
  const PointPillarsOptions got = pointpillars_options_from_config(
      load_model("configs/pointpillars/pointpillars_hv_secfpn_8xb6-160e_kitti-3d-3class.yaml"));
  const PointPillarsOptions want = pointpillars_kitti_3class_options();
  EXPECT_EQ(got.bbox_head.num_classes, 3);
  EXPECT_EQ(got.bbox_head.anchor_generator.ranges, want.bbox_head.anchor_generator.ranges);
  EXPECT_EQ(got.bbox_head.anchor_generator.sizes, want.bbox_head.anchor_generator.sizes);
  ASSERT_EQ(got.train_cfg.assigner.size(), 3u);
  EXPECT_EQ(got.train_cfg.assigner[0].pos_iou_thr, 0.5);
  EXPECT_EQ(got.train_cfg.assigner[1].neg_iou_thr, 0.35);
  EXPECT_EQ(got.train_cfg.assigner[2].pos_iou_thr, 0.6);
}

TEST(PointPillarsEngineModel, RegistryBuildsFullSizeModelsWithMmdet3dParameterCounts) {
  engine::Registry<engine::Model> registry("model");
  register_models(registry);
  EXPECT_TRUE(registry.contains("PointPillars"));
  const auto car = registry.build(
      load_model("configs/pointpillars/pointpillars_hv_secfpn_8xb6-160e_kitti-3d-car.yaml"));
  EXPECT_EQ(count_parameters(*car), 4814868);
  // Parameter names are mmdet3d's, so its state_dict keys line up.
  const auto names = car->named_parameters().keys();
  for (const char* key :
       {"voxel_encoder.pfn_layers.0.linear.weight", "voxel_encoder.pfn_layers.0.norm.weight",
        "backbone.blocks.0.0.weight", "backbone.blocks.2.16.bias", "neck.deblocks.2.0.weight",
        "bbox_head.conv_cls.bias", "bbox_head.conv_dir_cls.weight"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), key), names.end()) << key;
  }
  const auto three = registry.build(
      load_model("configs/pointpillars/pointpillars_hv_secfpn_8xb6-160e_kitti-3d-3class.yaml"));
  EXPECT_EQ(count_parameters(*three), 4834888);
}

// Two samples of random pillars on the demo config's 128 × 128 grid, one car each.
engine::Batch demo_batch(const PointPillarsOptions& o) {
  at::manual_seed(9);
  engine::Batch batch;
  batch.size = 2;
  const int64_t ny = o.middle_encoder.output_shape[0];
  const int64_t nx = o.middle_encoder.output_shape[1];
  for (int64_t b = 0; b < 2; ++b) {
    const int64_t m = 300 + 50 * b;
    const at::Tensor cells = at::randperm(ny * nx, at::kLong).narrow(0, 0, m);
    const at::Tensor coors =
        at::stack({at::zeros({m}, at::kLong), cells.div(nx, "floor"), cells.remainder(nx)}, 1);
    const at::Tensor num_points = at::randint(1, 17, {m}, at::kInt);
    const at::Tensor mask = (at::arange(16).unsqueeze(0) < num_points.unsqueeze(1)).to(at::kFloat);
    batch.lists["voxels"].push_back(at::rand({m, 16, 4}) * mask.unsqueeze(2));
    batch.lists["num_points"].push_back(num_points);
    batch.lists["coors"].push_back(coors.to(at::kInt));
    batch.lists["gt_bboxes_3d"].push_back(
        at::tensor({10.0f + 5.0f * b, -3.0f, -1.6f, 3.9f, 1.6f, 1.56f, 0.4f}).view({1, 7}));
    batch.lists["gt_labels_3d"].push_back(at::zeros({1}, at::kLong));
    batch.meta.push_back({{"sample_idx", std::to_string(b)}});
  }
  return batch;
}

TEST(PointPillarsEngineModel, TrainsAndPredictsThroughEngineBatches) {
  const config::Config cfg =
      config::load(source_dir() / "configs/pointpillars/pointpillars_demo_synthetic_car.yaml")
          .node("model");
  const PointPillarsOptions options = pointpillars_options_from_config(cfg);
  EXPECT_EQ(options.voxel_encoder.feat_channels, (std::vector<int64_t>{32}));
  EXPECT_EQ(options.middle_encoder.output_shape, (std::array<int64_t, 2>{128, 128}));
  engine::Registry<engine::Model> registry("model");
  register_models(registry);
  const std::shared_ptr<engine::Model> built = registry.build(cfg);
  engine::Model& model = *built;
  const engine::Batch batch = demo_batch(options);

  const BatchedPillars p = batch_pillars(batch);
  EXPECT_EQ(p.coors.size(0), 650);
  EXPECT_EQ(p.coors.size(1), 4);
  EXPECT_EQ(p.coors[0][0].item<int64_t>(), 0);
  EXPECT_EQ(p.coors[649][0].item<int64_t>(), 1);

  model.train();
  const engine::LossMap losses = model.forward_train(batch);
  ASSERT_EQ(losses.size(), 3u);
  for (const auto& [name, value] : losses) {
    EXPECT_TRUE(std::isfinite(value.item<double>())) << name;
  }
  engine::total_loss(losses).backward();
  for (const auto& param : model.named_parameters()) {
    ASSERT_TRUE(param.value().grad().defined()) << param.key();
  }

  model.eval();
  const std::vector<engine::Sample> out = model.predict(batch);
  ASSERT_EQ(out.size(), 2u);
  for (const auto& s : out) {
    EXPECT_EQ(s.tensor("bboxes_3d").size(1), 7);
    EXPECT_EQ(s.tensor("scores_3d").size(0), s.tensor("bboxes_3d").size(0));
    EXPECT_EQ(s.tensor("labels_3d").size(0), s.tensor("bboxes_3d").size(0));
  }
  EXPECT_EQ(out[1].meta.at("sample_idx"), "1");

  engine::Batch broken = batch;
  broken.lists["coors"][0] = at::zeros({300, 4}, at::kInt);
  EXPECT_THROW(model.forward_train(broken), c10::Error);
}

// Batches of raw points are voxelized with model.data_preprocessor.voxel_layer (mmdet3d's
// Det3DDataPreprocessor), max_voxels by mode: the demo config keeps 6000 / 8000 pillars.
TEST(PointPillarsEngineModel, VoxelizesPointBatchesWithTheConfiguredLayer) {
  const config::Config cfg =
      config::load(source_dir() / "configs/pointpillars/pointpillars_demo_synthetic_car.yaml")
          .node("model");
  engine::Registry<engine::Model> registry("model");
  register_models(registry);
  const std::shared_ptr<engine::Model> model = registry.build(cfg);
  at::manual_seed(3);
  // 20000 points spread over the 128 x 128 grid: more occupied cells than 6000.
  const at::Tensor xyz =
      at::rand({20000, 3}) * at::tensor({40.9f, 40.9f, 3.9f}) + at::tensor({0.0f, -20.45f, -2.95f});
  const at::Tensor points = at::cat({xyz, at::rand({20000, 1})}, 1);
  const BatchedPillars direct = voxelize_batch({points}, [] {
    data::VoxelizationOptions o;
    o.point_cloud_range = {0, -20.48, -3, 40.96, 20.48, 1};
    o.voxel_size = {0.32, 0.32, 4};
    o.max_points_per_voxel = 16;
    o.max_voxels = 6000;
    return o;
  }());
  EXPECT_EQ(direct.voxels.size(0), 6000);
  EXPECT_EQ(direct.voxels.size(1), 16);
  EXPECT_EQ(direct.coors.size(1), 4);

  engine::Batch batch;
  batch.size = 1;
  batch.lists["points"] = {points};
  batch.lists["gt_bboxes_3d"] = {
      at::tensor({10.0f, -3.0f, -1.6f, 3.9f, 1.6f, 1.56f, 0.4f}).view({1, 7})};
  batch.lists["gt_labels_3d"] = {at::zeros({1}, at::kLong)};
  batch.meta = {{{"sample_idx", "0"}}};
  model->train();
  const engine::LossMap losses = model->forward_train(batch);
  EXPECT_TRUE(std::isfinite(engine::total_loss(losses).item<double>()));
  model->eval();
  EXPECT_EQ(model->predict(batch).size(), 1u);
}

}  // namespace
}  // namespace ddp3d::models
