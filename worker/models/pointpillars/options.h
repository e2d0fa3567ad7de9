// Plain option structs for the PointPillars model. Field names follow mmdet3d's config keys
// (model.voxel_encoder.feat_channels, model.backbone.layer_nums, model.bbox_head.
// anchor_generator.ranges, model.train_cfg.assigner, ...) so the config system can fill them
// key by key. Defaults are mmdet3d's values for pointpillars_hv_secfpn_kitti.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace ddp3d::models {

// norm_cfg.type: mmdet3d's 'BN' / 'BN1d' / 'BN2d' (BatchNorm, statistics of this process's
// batch) or 'SyncBN' (SyncBatchNorm, statistics of every rank's batch; worker/dist).
enum class NormType { kBatchNorm, kSyncBatchNorm };

// "BN", "BN1d", "BN2d" or "SyncBN"; anything else throws std::invalid_argument listing these.
NormType parse_norm_type(const std::string& type);

// norm_cfg = dict(type='BN1d'/'BN'/'SyncBN', eps=1e-3, momentum=0.01)
struct NormCfg {
  NormType type = NormType::kBatchNorm;
  double eps = 1e-3;
  double momentum = 0.01;
};

// model.data_preprocessor.voxel_layer: how points become pillars (worker/data/voxelization.h).
struct VoxelLayerOptions {
  int64_t max_num_points = 32;
  std::array<double, 6> point_cloud_range{0.0, -39.68, -3.0, 69.12, 39.68, 1.0};
  std::array<double, 3> voxel_size{0.16, 0.16, 4.0};
  std::array<int64_t, 2> max_voxels{16000, 40000};  // [train, test]
};

// model.data_preprocessor (type='Det3DDataPreprocessor')
struct DataPreprocessorOptions {
  VoxelLayerOptions voxel_layer{};
};

// model.voxel_encoder (type='PillarFeatureNet')
struct PillarFeatureNetOptions {
  int64_t in_channels = 4;
  std::vector<int64_t> feat_channels{64};
  bool with_distance = false;
  bool with_cluster_center = true;
  bool with_voxel_center = true;
  std::array<double, 3> voxel_size{0.16, 0.16, 4.0};
  std::array<double, 6> point_cloud_range{0.0, -39.68, -3.0, 69.12, 39.68, 1.0};
  NormCfg norm_cfg{};
  std::string mode = "max";  // "max" | "avg"
  // mmdet3d's default: the pillar-centre offsets overwrite the raw x, y, z columns (its
  // released checkpoints were trained so). false keeps the raw coordinates.
  bool legacy = true;
};

// model.middle_encoder (type='PointPillarsScatter'); output_shape = [ny, nx]
struct PointPillarsScatterOptions {
  int64_t in_channels = 64;
  std::array<int64_t, 2> output_shape{496, 432};
};

// model.backbone (type='SECOND')
struct SECONDOptions {
  int64_t in_channels = 64;
  std::vector<int64_t> out_channels{64, 128, 256};
  std::vector<int64_t> layer_nums{3, 5, 5};
  std::vector<int64_t> layer_strides{2, 2, 2};
  NormCfg norm_cfg{};
};

// model.neck (type='SECONDFPN')
struct SECONDFPNOptions {
  std::vector<int64_t> in_channels{64, 128, 256};
  std::vector<int64_t> out_channels{128, 128, 128};
  std::vector<double> upsample_strides{1, 2, 4};
  NormCfg norm_cfg{};
  bool use_conv_for_no_stride = false;
};

// model.bbox_head.anchor_generator (type='AlignedAnchor3DRangeGenerator').
// ranges: one [x_min, y_min, z, x_max, y_max, z] per class; sizes: one [dx, dy, dz] per class.
struct AnchorGeneratorOptions {
  std::vector<std::array<double, 6>> ranges{{0.0, -39.68, -0.6, 69.12, 39.68, -0.6},
                                            {0.0, -39.68, -0.6, 69.12, 39.68, -0.6},
                                            {0.0, -39.68, -1.78, 69.12, 39.68, -1.78}};
  std::vector<std::array<double, 3>> sizes{{0.8, 0.6, 1.73}, {1.76, 0.6, 1.73}, {3.9, 1.6, 1.56}};
  std::vector<double> rotations{0.0, 1.57};  // mmdet3d writes π/2 as 1.57
  bool align_corner = false;
};

// mmdet.FocalLoss (use_sigmoid=True)
struct FocalLossOptions {
  double gamma = 2.0;
  double alpha = 0.25;
  double loss_weight = 1.0;
};

// mmdet.SmoothL1Loss
struct SmoothL1LossOptions {
  double beta = 1.0 / 9.0;
  double loss_weight = 2.0;
};

// mmdet.CrossEntropyLoss (use_sigmoid=False)
struct CrossEntropyLossOptions {
  double loss_weight = 0.2;
};

// model.bbox_head (type='Anchor3DHead')
struct Anchor3DHeadOptions {
  int64_t num_classes = 3;
  int64_t in_channels = 384;
  int64_t feat_channels = 384;
  AnchorGeneratorOptions anchor_generator{};
  bool use_direction_classifier = true;
  bool assign_per_class = true;
  bool diff_rad_by_sin = true;
  double dir_offset = -1.5707963267948966;  // -π/2 (mmdet3d ≥ 1.0 LiDAR convention)
  double dir_limit_offset = 0.0;
  FocalLossOptions loss_cls{};
  SmoothL1LossOptions loss_bbox{};
  CrossEntropyLossOptions loss_dir{};
};

// model.train_cfg.assigner[i] (type='Max3DIoUAssigner', iou_calculator='BboxOverlapsNearest3D')
struct Max3DIoUAssignerOptions {
  double pos_iou_thr = 0.6;
  double neg_iou_thr = 0.45;
  double min_pos_iou = 0.45;
  bool gt_max_assign_all = true;
  bool match_low_quality = true;
};

// model.train_cfg. One assigner for all anchors, or one per anchor class (same order as
// anchor_generator.sizes).
struct TrainCfg {
  std::vector<Max3DIoUAssignerOptions> assigner{
      {0.5, 0.35, 0.35, true, true}, {0.5, 0.35, 0.35, true, true}, {0.6, 0.45, 0.45, true, true}};
  std::vector<double> code_weight{};  // empty = all ones
  double pos_weight = -1.0;           // <= 0: positives weigh 1 in the classification loss
};

// model.test_cfg
struct TestCfg {
  bool use_rotate_nms = true;
  double nms_thr = 0.01;
  double score_thr = 0.1;
  int64_t nms_pre = 100;
  int64_t max_num = 50;
};

// model (type='PointPillars')
struct PointPillarsOptions {
  DataPreprocessorOptions data_preprocessor{};
  // model.voxel_encoder.type and model.middle_encoder.type. Another registered encoder fills
  // only the keys every encoder of its kind has: voxel_encoder.in_channels and feat_channels,
  // middle_encoder.in_channels and output_shape.
  std::string voxel_encoder_type = "PillarFeatureNet";
  std::string middle_encoder_type = "PointPillarsScatter";
  PillarFeatureNetOptions voxel_encoder{};
  PointPillarsScatterOptions middle_encoder{};
  // model.backbone.type. Another registered backbone (backbones/backbone_registry.h) fills
  // only backbone.in_channels and backbone.out_channels, the keys every backbone has.
  std::string backbone_type = "SECOND";
  SECONDOptions backbone{};
  // model.neck.type. Another registered neck (necks/neck.h) fills only neck.in_channels and
  // neck.out_channels, the keys every neck has.
  std::string neck_type = "SECONDFPN";
  SECONDFPNOptions neck{};
  // model.bbox_head.type. Another registered head (dense_heads/dense_head.h) fills only
  // bbox_head.in_channels and bbox_head.num_classes, the keys every head has.
  std::string bbox_head_type = "Anchor3DHead";
  Anchor3DHeadOptions bbox_head{};
  TrainCfg train_cfg{};
  TestCfg test_cfg{};
};

// mmdet3d's pointpillars_hv_secfpn_8xb6-160e_kitti-3d-3class (Pedestrian, Cyclist, Car).
PointPillarsOptions pointpillars_kitti_3class_options();
// mmdet3d's pointpillars_hv_secfpn_8xb6-160e_kitti-3d-car (Car only).
PointPillarsOptions pointpillars_kitti_car_options();

// Throws std::invalid_argument naming the offending key (e.g. "model.backbone.layer_nums")
// when the options are inconsistent (the first problem pointpillars/checks.h finds).
void validate(const PointPillarsOptions& options);

}  // namespace ddp3d::models
