#include "worker/models/pointpillars/fields.h"

#include <numbers>
#include <string>
#include <vector>

#include "worker/config/common_schemas.h"
#include "worker/models/pointpillars/config.h"

namespace ddp3d::models {
namespace {

using config::FieldTable;
using S = config::Schema;

using config::schemas::int_list;
using config::schemas::prob;
using config::schemas::range6;
using config::schemas::vec;

// A layer's input width (PointPillars' parts default to the PFN's 64).
S in_channels() {
  return S::integer().min(1).def(64);
}
// One entry per backbone stage.
S per_stage(S element, const char* doc) {
  return S::list(std::move(element)).min_length(1).required().doc(doc);
}
S fixed_type(const char* type) {
  return S::string().one_of({type}).def(type);
}

// norm_cfg: `type` is BatchNorm as mmdet3d names it for this layer (the first is the default),
// or SyncBN (statistics over every rank's batch; worker/dist/sync_batch_norm.h).
FieldTable<NormCfg> norm_fields(std::vector<std::string> types) {
  const std::string def = types.front();
  types.push_back("SyncBN");
  return FieldTable<NormCfg>()
      .custom(
          "type", S::string().one_of(std::move(types)).def(def.c_str()),
          [](const config::Config& n, NormCfg& o) {
            o.type = parse_norm_type(n.get<std::string>("type"));
          },
          [](const NormCfg& o) {
            return config::Value::string(o.type == NormType::kSyncBatchNorm ? "SyncBN" : "BN");
          })
      .key("eps", S::number().min(0, true).def(1e-3).doc("added to the variance"), &NormCfg::eps)
      .key("momentum", prob().def(0.01).doc("running-statistics update factor"),
           &NormCfg::momentum);
}

// A norm_cfg key of a part: its table and its schema.
template <typename Part>
FieldTable<Part>&& with_norm(FieldTable<Part>&& table, NormCfg Part::*member,
                             std::vector<std::string> types, const char* doc) {
  FieldTable<NormCfg> norm = norm_fields(std::move(types));
  S schema = S::map(norm.fields()).def_empty_map().doc(doc);
  return std::move(table).nested("norm_cfg", std::move(schema), member, std::move(norm));
}

FieldTable<VoxelLayerOptions> voxel_layer_fields() {
  using O = VoxelLayerOptions;
  return FieldTable<O>()
      .key("max_num_points",
           S::integer().min(1).def(32).doc("points kept per pillar (the rest dropped)"),
           &O::max_num_points)
      .key("point_cloud_range",
           range6().required().doc("[x_min, y_min, z_min, x_max, y_max, z_max], metres"),
           &O::point_cloud_range)
      .key("voxel_size",
           S::list(S::number().min(0, true))
               .length(3)
               .required()
               .doc("pillar size [x, y, z], metres"),
           &O::voxel_size)
      .key("max_voxels",
           S::list(S::integer().min(1))
               .length(2)
               .def_int_list({16000, 40000})
               .doc("most pillars per sample [train, test]"),
           &O::max_voxels);
}

FieldTable<DataPreprocessorOptions> data_preprocessor_fields() {
  FieldTable<VoxelLayerOptions> voxel_layer = voxel_layer_fields();
  S voxel_layer_schema =
      S::map(voxel_layer.fields())
          .required()
          .doc("pillar voxelization (CPU, or the CUDA kernel when built with CUDA)");
  return FieldTable<DataPreprocessorOptions>()
      .accepted("type", fixed_type("Det3DDataPreprocessor"))
      .accepted("voxel", S::boolean().def(true).doc("voxelize the points"))
      .nested("voxel_layer", std::move(voxel_layer_schema), &DataPreprocessorOptions::voxel_layer,
              std::move(voxel_layer));
}

// The keys every voxel encoder has: what PointPillars connects to the points and the middle
// encoder.
FieldTable<PillarFeatureNetOptions> voxel_encoder_contract_fields() {
  using O = PillarFeatureNetOptions;
  return FieldTable<O>()
      .key("in_channels", S::integer().min(1).required(), &O::in_channels)
      .key("feat_channels", int_list().required(), &O::feat_channels);
}

FieldTable<PillarFeatureNetOptions> pillar_feature_net_fields() {
  using O = PillarFeatureNetOptions;
  return with_norm(
             FieldTable<O>()
                 .key("in_channels", S::integer().min(1).def(4).doc("point features: x, y, z, r"),
                      &O::in_channels)
                 .key("feat_channels", int_list().def_int_list({64}).doc("PFN layer widths"),
                      &O::feat_channels)
                 .key("with_distance", S::boolean().def(false).doc("add the point's range"),
                      &O::with_distance)
                 .key("with_cluster_center",
                      S::boolean().def(true).doc("add offset to pillar mean"),
                      &O::with_cluster_center)
                 .key("with_voxel_center",
                      S::boolean().def(true).doc("add offset to pillar centre"),
                      &O::with_voxel_center)
                 .key("voxel_size",
                      vec(3).doc("defaults to data_preprocessor.voxel_layer.voxel_size"),
                      &O::voxel_size)
                 .key("point_cloud_range",
                      range6().doc("defaults to data_preprocessor.voxel_layer.point_cloud_range"),
                      &O::point_cloud_range),
             &O::norm_cfg, {"BN1d"}, "BatchNorm1d after each PFN layer")
      .fixed("mode", &O::mode)
      .fixed("legacy", &O::legacy);
}

// The keys every middle encoder has: the channels it takes and the BEV grid it makes.
FieldTable<PointPillarsScatterOptions> middle_encoder_contract_fields() {
  using O = PointPillarsScatterOptions;
  return FieldTable<O>()
      .key("in_channels", in_channels(), &O::in_channels)
      .key("output_shape", S::list(S::integer().min(1)).length(2).required(), &O::output_shape);
}

FieldTable<PointPillarsScatterOptions> make_scatter_fields() {
  using O = PointPillarsScatterOptions;
  return FieldTable<O>()
      .key("in_channels", in_channels(), &O::in_channels)
      .key("output_shape",
           S::list(S::integer().min(1))
               .length(2)
               .required()
               .doc("BEV grid [ny, nx] = range / voxel size"),
           &O::output_shape);
}

// The keys every backbone has: what PointPillars connects to the scatter and the neck.
FieldTable<SECONDOptions> backbone_contract_fields() {
  return FieldTable<SECONDOptions>()
      .key("in_channels", in_channels(), &SECONDOptions::in_channels)
      .key("out_channels", per_stage(S::integer().min(1), "channels of each stage"),
           &SECONDOptions::out_channels);
}

FieldTable<SECONDOptions> make_second_fields() {
  using O = SECONDOptions;
  return with_norm(
      FieldTable<O>()
          .key("in_channels", in_channels(), &O::in_channels)
          .key("layer_nums",
               per_stage(S::integer().min(0), "3x3 convs per stage after the strided one"),
               &O::layer_nums)
          .key("layer_strides", per_stage(S::integer().min(1), "stride of each stage"),
               &O::layer_strides)
          .key("out_channels", per_stage(S::integer().min(1), "channels of each stage"),
               &O::out_channels),
      &O::norm_cfg, {"BN", "BN2d"}, "BatchNorm2d after each conv");
}

// The keys every neck has: what PointPillars connects to the backbone and the head.
FieldTable<SECONDFPNOptions> neck_contract_fields() {
  using O = SECONDFPNOptions;
  return FieldTable<O>()
      .key("in_channels", int_list().required(), &O::in_channels)
      .key("out_channels", int_list().required(), &O::out_channels);
}

FieldTable<SECONDFPNOptions> make_second_fpn_fields() {
  using O = SECONDFPNOptions;
  return with_norm(FieldTable<O>()
                       .key("in_channels", int_list().required(), &O::in_channels)
                       .key("upsample_strides",
                            per_stage(S::number().min(0, true),
                                      "per stage; < 1 means a strided conv down"),
                            &O::upsample_strides)
                       .key("out_channels", int_list().required(), &O::out_channels),
                   &O::norm_cfg, {"BN", "BN2d"}, "BatchNorm2d after each deconv")
      .fixed("use_conv_for_no_stride", &O::use_conv_for_no_stride);
}

FieldTable<AnchorGeneratorOptions> anchor_generator_fields() {
  using O = AnchorGeneratorOptions;
  return FieldTable<O>()
      .accepted("type", fixed_type("AlignedAnchor3DRangeGenerator"))
      .key("ranges",
           S::list(range6()).min_length(1).required().doc(
               "per anchor class: the range its centres cover"),
           &O::ranges)
      .key("sizes",
           S::list(vec(3)).min_length(1).required().doc(
               "per anchor class: [l, w, h] (mmdet3d order), metres"),
           &O::sizes)
      .key("rotations",
           S::list(S::number()).min_length(1).def_list({0.0, 1.57}).doc("anchor yaws, radians"),
           &O::rotations)
      .accepted("reshape_out",
                S::boolean().def(false).doc("flatten anchors over classes (mmdet3d's option)"))
      .fixed("align_corner", &O::align_corner);
}

S loss_weight() {
  return S::number().min(0).def(1.0).doc("scales this loss");
}

FieldTable<FocalLossOptions> focal_loss_fields() {
  using O = FocalLossOptions;
  return FieldTable<O>()
      .accepted("use_sigmoid", S::boolean().def(true))
      .key("gamma", S::number().min(0).def(2.0), &O::gamma)
      .key("alpha", prob().def(0.25), &O::alpha)
      .key("loss_weight", loss_weight(), &O::loss_weight);
}

FieldTable<SmoothL1LossOptions> smooth_l1_loss_fields() {
  using O = SmoothL1LossOptions;
  return FieldTable<O>()
      .key("beta", S::number().min(0).def(1.0 / 9.0), &O::beta)
      .key("loss_weight", loss_weight(), &O::loss_weight);
}

FieldTable<CrossEntropyLossOptions> cross_entropy_loss_fields() {
  using O = CrossEntropyLossOptions;
  return FieldTable<O>()
      .accepted("use_sigmoid", S::boolean().def(false))
      .key("loss_weight", loss_weight(), &O::loss_weight);
}

// A loss mapping: `type` picks the variant, each with its own keys.
S loss(const char* name, config::ComponentSchemas::Variants variants, const char* default_type) {
  return S::map({}).variants(std::move(variants), default_type).required().doc(name);
}

FieldTable<Anchor3DHeadOptions> anchor3d_head_fields() {
  using O = Anchor3DHeadOptions;
  FieldTable<AnchorGeneratorOptions> anchors = anchor_generator_fields();
  S anchors_schema = S::map(anchors.fields()).required().doc("anchors per feature-map cell");
  FieldTable<FocalLossOptions> focal = focal_loss_fields();
  FieldTable<SmoothL1LossOptions> smooth_l1 = smooth_l1_loss_fields();
  FieldTable<CrossEntropyLossOptions> cross_entropy = cross_entropy_loss_fields();
  S cls = loss("classification loss", {{"FocalLoss", focal.fields()}}, "FocalLoss");
  // L1Loss is read as SmoothL1Loss's table: its beta keeps the default.
  S bbox =
      loss("box regression loss",
           {{"SmoothL1Loss", smooth_l1.fields()}, {"L1Loss", {{"loss_weight", loss_weight()}}}},
           "SmoothL1Loss");
  S dir = loss("direction classification loss", {{"CrossEntropyLoss", cross_entropy.fields()}},
               "CrossEntropyLoss");
  return FieldTable<O>()
      .key("num_classes", S::integer().min(1).required(), &O::num_classes)
      .key("in_channels", S::integer().min(1).required(), &O::in_channels)
      .key("feat_channels", S::integer().min(1).required(), &O::feat_channels)
      .key("use_direction_classifier", S::boolean().def(true), &O::use_direction_classifier)
      .key("assign_per_class", S::boolean().def(true).doc("assign each class's anchors apart"),
           &O::assign_per_class)
      .key("diff_rad_by_sin", S::boolean().def(true).doc("regress sin(a - b) for yaw"),
           &O::diff_rad_by_sin)
      .key("dir_offset", S::number().def(-std::numbers::pi / 2).doc("direction bin offset"),
           &O::dir_offset)
      .key("dir_limit_offset", S::number().def(0), &O::dir_limit_offset)
      .nested("anchor_generator", std::move(anchors_schema), &O::anchor_generator,
              std::move(anchors))
      .accepted("bbox_coder", S::map({{"type", fixed_type("DeltaXYZWLHRBBoxCoder")},
                                      {"code_size", S::integer().min(7).def(7)}})
                                  .def_empty_map())
      .nested("loss_cls", std::move(cls), &O::loss_cls, std::move(focal))
      .nested("loss_bbox", std::move(bbox), &O::loss_bbox, std::move(smooth_l1))
      .nested("loss_dir", std::move(dir), &O::loss_dir, std::move(cross_entropy));
}

// The keys every head has: what PointPillars connects to the neck and to the datasets' classes.
FieldTable<Anchor3DHeadOptions> head_contract_fields() {
  using O = Anchor3DHeadOptions;
  return FieldTable<O>()
      .key("num_classes", S::integer().min(1).required(), &O::num_classes)
      .key("in_channels", S::integer().min(1).required(), &O::in_channels);
}

FieldTable<Max3DIoUAssignerOptions> assigner_fields() {
  using O = Max3DIoUAssignerOptions;
  return FieldTable<O>()
      .accepted("type", fixed_type("Max3DIoUAssigner"))
      .accepted("iou_calculator",
                S::map({{"type", S::string()
                                     .one_of({"BboxOverlapsNearest3D"})
                                     .def("BboxOverlapsNearest3D")
                                     .doc("BEV IoU of axis-aligned (nearest) boxes")}})
                    .def_empty_map())
      .key("pos_iou_thr", prob().required().doc("IoU at or above which an anchor is positive"),
           &O::pos_iou_thr)
      .key("neg_iou_thr", prob().required().doc("IoU below which an anchor is negative"),
           &O::neg_iou_thr)
      .key("min_pos_iou", prob().required().doc("a GT's best anchor is positive if IoU >= this"),
           &O::min_pos_iou)
      .accepted("ignore_iof_thr", S::number().def(-1).doc("-1: no ignore regions"))
      .fixed("gt_max_assign_all", &O::gt_max_assign_all)
      .fixed("match_low_quality", &O::match_low_quality);
}

FieldTable<TrainCfg> train_cfg_fields() {
  FieldTable<Max3DIoUAssignerOptions> assigner = assigner_fields();
  S assigners = S::list(S::map(assigner.fields()))
                    .single_as_list()
                    .min_length(1)
                    .required()
                    .doc("one per class (in class order) when assign_per_class");
  return FieldTable<TrainCfg>()
      .nested_list("assigner", std::move(assigners), &TrainCfg::assigner, std::move(assigner))
      .accepted("allowed_border", S::number().def(0))
      .key("pos_weight", S::number().def(-1).doc("-1: weight 1 for positives"),
           &TrainCfg::pos_weight)
      .accepted("debug", S::boolean().def(false))
      .fixed("code_weight", &TrainCfg::code_weight);
}

FieldTable<TestCfg> test_cfg_fields() {
  using O = TestCfg;
  return FieldTable<O>()
      .key("use_rotate_nms", S::boolean().def(true).doc("rotated BEV NMS"), &O::use_rotate_nms)
      .accepted("nms_across_levels", S::boolean().def(false))
      .key("nms_thr", prob().def(0.01).doc("NMS IoU threshold"), &O::nms_thr)
      .key("score_thr", prob().def(0.1).doc("drop boxes scoring below"), &O::score_thr)
      .accepted("min_bbox_size", S::number().min(0).def(0))
      .key("nms_pre", S::integer().min(1).def(100).doc("top-k boxes before NMS"), &O::nms_pre)
      .key("max_num", S::integer().min(1).def(50).doc("boxes kept per sample"), &O::max_num);
}

// A part's slot: its default `type` is read whole with `fields`; another registered type of
// the part's kind gives only its `contract` keys, the ones PointPillars connects (the module
// itself comes from the kind's registry, its own keys are its schema's).
template <typename Part>
void add_slot(FieldTable<PointPillarsOptions>& table, const char* name, const char* type,
              const char* doc, std::string PointPillarsOptions::*type_member,
              Part PointPillarsOptions::*member, const FieldTable<Part>& fields,
              FieldTable<Part> contract) {
  auto read = [name, type, type_member, member, fields, contract](const config::Config& model,
                                                                  PointPillarsOptions& o) {
    const config::Config node = model.node(name);
    o.*type_member = node.get<std::string>("type");
    if (o.*type_member == type) {
      fields.read(node, o.*member);
    } else {
      contract.read(node, o.*member);
    }
  };
  auto write = [member, fields](const PointPillarsOptions& o) {
    return fields.to_value(o.*member);
  };
  std::move(table).custom(name, S::component(name, type).required().doc(doc), read, write);
}

FieldTable<PointPillarsOptions> make_pointpillars_fields() {
  using O = PointPillarsOptions;
  FieldTable<DataPreprocessorOptions> pre = data_preprocessor_fields();
  S pre_schema =
      S::map(pre.fields()).required().doc("batches the points and voxelizes them into pillars");
  FieldTable<TrainCfg> train = train_cfg_fields();
  S train_schema = S::map(train.fields()).required().doc("target assignment");
  FieldTable<TestCfg> test = test_cfg_fields();
  S test_schema = S::map(test.fields()).required().doc("inference post-processing");
  FieldTable<O> t = FieldTable<O>().nested("data_preprocessor", std::move(pre_schema),
                                           &O::data_preprocessor, std::move(pre));
  add_slot(t, "voxel_encoder", "PillarFeatureNet",
           "the voxel encoder (PillarFeatureNet: per-point features -> one vector per pillar)",
           &O::voxel_encoder_type, &O::voxel_encoder, pillar_feature_net_fields(),
           voxel_encoder_contract_fields());
  add_slot(t, "middle_encoder", "PointPillarsScatter",
           "the middle encoder (PointPillarsScatter: pillar vectors onto the BEV grid)",
           &O::middle_encoder_type, &O::middle_encoder, scatter_fields(),
           middle_encoder_contract_fields());
  add_slot(t, "backbone", "SECOND",
           "the BEV backbone (SECOND: strided conv stages over the BEV grid)", &O::backbone_type,
           &O::backbone, second_fields(), backbone_contract_fields());
  add_slot(t, "neck", "SECONDFPN",
           "the neck (SECONDFPN: upsamples every stage to one resolution and concatenates)",
           &O::neck_type, &O::neck, second_fpn_fields(), neck_contract_fields());
  add_slot(t, "bbox_head", "Anchor3DHead",
           "the dense head (Anchor3DHead: per-anchor class scores, box deltas and direction "
           "bins)",
           &O::bbox_head_type, &O::bbox_head, anchor3d_head_fields(), head_contract_fields());
  return std::move(t)
      .nested("train_cfg", std::move(train_schema), &O::train_cfg, std::move(train))
      .nested("test_cfg", std::move(test_schema), &O::test_cfg, std::move(test));
}

}  // namespace

const FieldTable<PointPillarsOptions>& pointpillars_fields() {
  static const FieldTable<PointPillarsOptions> table = make_pointpillars_fields();
  return table;
}

const FieldTable<SECONDOptions>& second_fields() {
  static const FieldTable<SECONDOptions> table = make_second_fields();
  return table;
}

const FieldTable<PointPillarsScatterOptions>& scatter_fields() {
  static const FieldTable<PointPillarsScatterOptions> table = make_scatter_fields();
  return table;
}

const FieldTable<SECONDFPNOptions>& second_fpn_fields() {
  static const FieldTable<SECONDFPNOptions> table = make_second_fpn_fields();
  return table;
}

void register_pointpillars_schemas(config::ComponentSchemas& schemas) {
  schemas.add("model", "PointPillars", pointpillars_fields().fields(), check_pointpillars_config);
  schemas.add("voxel_encoder", "PillarFeatureNet", pillar_feature_net_fields().fields());
  schemas.add("middle_encoder", "PointPillarsScatter", scatter_fields().fields());
  schemas.add("backbone", "SECOND", second_fields().fields(), check_second_config);
  schemas.add("neck", "SECONDFPN", second_fpn_fields().fields());
  schemas.add("bbox_head", "Anchor3DHead", anchor3d_head_fields().fields());
}

}  // namespace ddp3d::models
