// Cross-key checks: a shipped PointPillars config broken one way at a time through
// --cfg-options must fail naming the key and the option that set it.
#include <gtest/gtest.h>

#include <ostream>

#include "tests/support/subprocess.h"
#include "tests/unit/config/temp_dir.h"

namespace ddp3d::config {
namespace {

using testing::error_of;

std::filesystem::path demo_config() {
  return ::ddp3d::testing::source_path("configs/pointpillars/pointpillars_demo_synthetic_car.yaml");
}

struct Inconsistent {
  const char* name;
  std::vector<std::string> cfg_options;
  std::string expected;
};

void PrintTo(const Inconsistent& c, std::ostream* os) {
  *os << c.name;
}

class ConsistencyTable : public ::testing::TestWithParam<Inconsistent> {};

TEST_P(ConsistencyTable, FailsNamingKeyAndOrigin) {
  const std::string msg = error_of([&] { load(demo_config(), GetParam().cfg_options); });
  EXPECT_NE(msg.find(GetParam().expected), std::string::npos) << msg;
}

INSTANTIATE_TEST_SUITE_P(
    Config, ConsistencyTable,
    ::testing::Values(
        Inconsistent{"grid_vs_range",
                     {"model.middle_encoder.output_shape=[100,124]"},
                     "--cfg-options model.middle_encoder.output_shape=[100,124]: "
                     "model.middle_encoder.output_shape: expected [128, 128] ([ny, nx] = range / "
                     "voxel size from "},
        Inconsistent{"voxel_size_changed_alone",
                     {"model.data_preprocessor.voxel_layer.voxel_size=[0.16,0.16,4]"},
                     "model.middle_encoder.output_shape: expected [256, 256]"},
        Inconsistent{"encoder_copy_differs",
                     {"model.voxel_encoder.voxel_size=[0.2,0.2,4]"},
                     "model.voxel_encoder.voxel_size: differs from "
                     "model.data_preprocessor.voxel_layer.voxel_size [0.32, 0.32, 4.0]"},
        Inconsistent{"scatter_channels",
                     {"model.voxel_encoder.feat_channels=[64]"},
                     "model.middle_encoder.in_channels: expected 64 (the last of "
                     "model.voxel_encoder.feat_channels), got 32"},
        Inconsistent{"neck_vs_backbone",
                     {"model.neck.in_channels=[32,64,64]"},
                     "--cfg-options model.neck.in_channels=[32,64,64]: model.neck.in_channels: "
                     "expected [32, 64, 128] (model.backbone.out_channels), got [32, 64, 64]"},
        Inconsistent{"stage_counts",
                     {"model.backbone.layer_nums=[1,2]"},
                     "model.backbone.layer_nums: expected 3 entries (one per backbone stage)"},
        Inconsistent{"head_vs_neck",
                     {"model.bbox_head.in_channels=384"},
                     "model.bbox_head.in_channels: expected 192 (the sum of "
                     "model.neck.out_channels), got 384"},
        Inconsistent{"classes_vs_head",
                     {"train_dataloader.dataset.metainfo.classes=[Car,Van]"},
                     "train_dataloader.dataset.metainfo.classes: expected 1 class names "
                     "(model.bbox_head.num_classes), got 2"},
        Inconsistent{
            "anchors_vs_classes",
            {"model.bbox_head.num_classes=2", "train_dataloader.dataset.metainfo.classes=[Car,Van]",
             "val_dataloader.dataset.metainfo.classes=[Car,Van]"},
            "model.bbox_head.anchor_generator.sizes: expected one anchor size per class "
            "(2, model.bbox_head.num_classes) with assign_per_class, got 1"},
        Inconsistent{"schedule_end_before_begin",
                     {"param_scheduler.1.end=4"},
                     "--cfg-options param_scheduler.1.end=4: param_scheduler.1.end: must be "
                     "greater than begin (12), got 4"},
        Inconsistent{"iteration_loop_without_max_iters",
                     {"train_cfg.by_epoch=false"},
                     "train_cfg.max_iters: missing required key"},
        Inconsistent{"iteration_loop_given_max_epochs",
                     {"train_cfg.by_epoch=false", "train_cfg.max_iters=100"},
                     "train_cfg.max_epochs: not a key of IterBasedTrainLoop; EpochBasedTrainLoop "
                     "has it (set train_cfg.type)"},
        Inconsistent{"loop_type_contradicting_by_epoch",
                     {"train_cfg.type=EpochBasedTrainLoop", "train_cfg.by_epoch=false"},
                     "--cfg-options train_cfg.by_epoch=false: train_cfg.by_epoch: contradicts "
                     "train_cfg.type (\"EpochBasedTrainLoop\")"},
        Inconsistent{"part_of_the_wrong_kind",
                     {"model.neck.type=SECOND"},
                     "--cfg-options model.neck.type=SECOND: model.neck.type: expected one of: "
                     "SECONDFPN; got \"SECOND\""},
        Inconsistent{"epoch_loop_given_max_iters",
                     {"train_cfg.max_iters=100"},
                     "--cfg-options train_cfg.max_iters=100: train_cfg.max_iters: not a key of "
                     "EpochBasedTrainLoop; IterBasedTrainLoop has it (set train_cfg.type)"}),
    [](const ::testing::TestParamInfo<Inconsistent>& info) {
      return std::string(info.param.name);
    });

std::filesystem::path centerpoint_demo_config() {
  return demo_config().parent_path().parent_path() /
         "centerpoint/centerpoint_demo_synthetic_car.yaml";
}

class CenterPointConsistencyTable : public ::testing::TestWithParam<Inconsistent> {};

TEST_P(CenterPointConsistencyTable, FailsNamingKeyAndOrigin) {
  const std::string msg =
      error_of([&] { load(centerpoint_demo_config(), GetParam().cfg_options); });
  EXPECT_NE(msg.find(GetParam().expected), std::string::npos) << msg;
}

INSTANTIATE_TEST_SUITE_P(
    Config, CenterPointConsistencyTable,
    ::testing::Values(
        Inconsistent{"factor_not_dividing_the_grid",
                     {"model.bbox_head.bbox_coder.out_size_factor=3"},
                     "model.bbox_head.bbox_coder.out_size_factor: 3 does not divide the BEV grid "
                     "[128, 128] (" +
                         demo_config().string() + ":"},
        Inconsistent{"even_kernel",
                     {"model.bbox_head.separate_head.final_kernel=2"},
                     "model.bbox_head.separate_head.final_kernel: must be odd"},
        Inconsistent{"sizes_not_log_coded",
                     {"model.bbox_head.norm_bbox=false"},
                     "model.bbox_head.norm_bbox: only log sizes are regressed"},
        Inconsistent{"code_weights_short",
                     {"model.train_cfg.code_weights=[1,1]"},
                     "model.train_cfg.code_weights: expected a list of length 8, got 2"},
        Inconsistent{"anchor_head_keys_on_center_point",
                     {"model.bbox_head.type=Anchor3DHead"},
                     "model.bbox_head.share_conv_channel: not a key of Anchor3DHead; CenterHead "
                     "has it (set model.bbox_head.type)"},
        Inconsistent{"center_point_keys_on_point_pillars",
                     {"model.type=PointPillars"},
                     "model.train_cfg.gaussian_overlap: unknown key"},
        Inconsistent{"head_on_wrong_classes",
                     {"model.bbox_head.num_classes=2"},
                     "expected 2 class names (model.bbox_head.num_classes), got 1"}),
    [](const ::testing::TestParamInfo<Inconsistent>& info) {
      return std::string(info.param.name);
    });

TEST(Consistency, ConsistentChangeTogetherIsAccepted) {
  // Changing range, voxel size and grid together (and the encoder's copies) is fine.
  const Config cfg =
      load(demo_config(), {
                              "model.data_preprocessor.voxel_layer.voxel_size=[0.16,0.16,4]",
                              "model.voxel_encoder.voxel_size=[0.16,0.16,4]",
                              "model.middle_encoder.output_shape=[256,256]",
                          });
  EXPECT_EQ(cfg.get<std::vector<int>>("model.middle_encoder.output_shape"),
            (std::vector<int>{256, 256}));
}

}  // namespace
}  // namespace ddp3d::config
