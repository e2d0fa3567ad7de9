#include "worker/models/centerpoint/fields.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "worker/config/common_schemas.h"
#include "worker/models/pointpillars/config.h"
#include "worker/models/pointpillars/fields.h"

namespace ddp3d::models {
namespace {

using config::FieldTable;
using S = config::Schema;

using config::schemas::prob;
using config::schemas::range6;
using config::schemas::vec;

S loss_weight(double def) {
  return S::number().min(0).def(def).doc("scales this loss");
}

FieldTable<CenterPointBBoxCoderOptions> bbox_coder_fields() {
  using O = CenterPointBBoxCoderOptions;
  return FieldTable<O>()
      .accepted("type", S::string().one_of({"CenterPointBBoxCoder"}).def("CenterPointBBoxCoder"))
      .key("pc_range",
           vec(2).nullable().doc("[x_min, y_min] of the BEV grid; defaults to "
                                 "data_preprocessor.voxel_layer.point_cloud_range"),
           &O::pc_range)
      .key("voxel_size",
           vec(2).nullable().doc("[x, y] of a grid cell; defaults to the voxel layer's"),
           &O::voxel_size)
      .key("out_size_factor",
           S::integer().min(1).required().doc("grid cells per heatmap cell (the neck's stride)"),
           &O::out_size_factor)
      .key("post_center_range",
           range6().nullable().doc("decoded centres outside are dropped (null: none are)"),
           &O::post_center_range)
      .key("max_num", S::integer().min(1).def(500).doc("peaks decoded per sample"), &O::max_num)
      .key("score_threshold", prob().def(0.1).doc("peaks scoring below are dropped"),
           &O::score_threshold)
      .accepted("code_size",
                S::integer().min(7).max(7).def(7).doc("box values (x, y, z, dx, dy, dz, yaw)"));
}

FieldTable<GaussianFocalLossOptions> gaussian_focal_loss_fields() {
  using O = GaussianFocalLossOptions;
  return FieldTable<O>()
      .accepted("type", S::string().one_of({"GaussianFocalLoss"}).def("GaussianFocalLoss"))
      .accepted("reduction", S::string().one_of({"mean"}).def("mean"))
      .key("alpha", S::number().min(0).def(2.0).doc("power of (1 - p) at peaks, of p elsewhere"),
           &O::alpha)
      .key("gamma", S::number().min(0).def(4.0).doc("power of (1 - target) off the peaks"),
           &O::gamma)
      .key("loss_weight", loss_weight(1.0), &O::loss_weight);
}

FieldTable<L1LossOptions> l1_loss_fields() {
  using O = L1LossOptions;
  return FieldTable<O>()
      .accepted("type", S::string().one_of({"L1Loss"}).def("L1Loss"))
      .accepted("reduction", S::string().one_of({"mean"}).def("mean"))
      .key("loss_weight", loss_weight(0.25), &O::loss_weight);
}

FieldTable<SeparateHeadOptions> separate_head_fields() {
  using O = SeparateHeadOptions;
  return FieldTable<O>()
      .accepted("type", S::string().one_of({"SeparateHead"}).def("SeparateHead"))
      .key("final_kernel",
           S::integer().min(1).max(7).def(3).doc("kernel of each separate head's convs (odd)"),
           &O::final_kernel)
      .key("init_bias", S::number().def(-2.19).doc("initial heatmap logit"), &O::init_bias);
}

FieldTable<CenterHeadOptions> make_center_head_fields() {
  using O = CenterHeadOptions;
  FieldTable<SeparateHeadOptions> separate = separate_head_fields();
  S separate_schema = S::map(separate.fields()).def_empty_map().doc("each output's convs");
  FieldTable<CenterPointBBoxCoderOptions> coder = bbox_coder_fields();
  S coder_schema = S::map(coder.fields()).required().doc("heatmap peaks to boxes");
  FieldTable<GaussianFocalLossOptions> focal = gaussian_focal_loss_fields();
  S focal_schema = S::map(focal.fields()).def_empty_map().doc("heatmap loss");
  FieldTable<L1LossOptions> l1 = l1_loss_fields();
  S l1_schema = S::map(l1.fields()).def_empty_map().doc("regression loss at the peaks");
  return FieldTable<O>()
      .key("num_classes", S::integer().min(1).required().doc("heatmap channels, one per class"),
           &O::num_classes)
      .key("in_channels", S::integer().min(1).required(), &O::in_channels)
      .key("share_conv_channel", S::integer().min(1).def(64).doc("channels of the shared 3x3 conv"),
           &O::share_conv_channel)
      .key("head_conv", S::integer().min(1).def(64).doc("channels inside each separate head"),
           &O::head_conv)
      .nested("separate_head", std::move(separate_schema), &O::separate_head, std::move(separate))
      .nested("bbox_coder", std::move(coder_schema), &O::bbox_coder, std::move(coder))
      .nested("loss_cls", std::move(focal_schema), &O::loss_cls, std::move(focal))
      .nested("loss_bbox", std::move(l1_schema), &O::loss_bbox, std::move(l1))
      .accepted("norm_bbox", S::boolean().def(true).doc("regress log sizes (must be true)"));
}

FieldTable<CenterPointTrainCfg> make_train_cfg_fields() {
  using O = CenterPointTrainCfg;
  return FieldTable<O>()
      .key("gaussian_overlap",
           S::number().min(0, true).max(1, true).def(0.1).doc(
               "the overlap a box shifted by the Gaussian's radius keeps"),
           &O::gaussian_overlap)
      .key("min_radius", S::integer().min(0).def(2).doc("smallest Gaussian radius, cells"),
           &O::min_radius)
      .key("max_objs", S::integer().min(1).max(100000).def(500).doc("boxes per sample kept"),
           &O::max_objs)
      .key("code_weights",
           S::list(S::number().min(0))
               .length(8)
               .def_list({1, 1, 1, 1, 1, 1, 1, 1})
               .doc("per regression channel: reg x, y, height, dim x, y, z, rot sin, cos"),
           &O::code_weights);
}

FieldTable<CenterPointTestCfg> make_test_cfg_fields() {
  using O = CenterPointTestCfg;
  return FieldTable<O>()
      .accepted("nms_type", S::string().one_of({"rotate"}).def("rotate").doc("rotated BEV NMS"))
      .key("nms_thr", prob().def(0.2).doc("NMS IoU threshold"), &O::nms_thr)
      .key("pre_max_size", S::integer().min(1).def(1000).doc("top-scoring boxes NMS visits"),
           &O::pre_max_size)
      .key("post_max_size", S::integer().min(1).def(83).doc("boxes kept per sample after NMS"),
           &O::post_max_size);
}

// The heatmap's cell must divide the BEV grid: out_size_factor is the neck's stride.
void check_center_head(config::CrossCheck& c, const std::string& key) {
  const std::string model = key.substr(0, key.rfind('.'));
  const config::Value* model_type = c.at(model + ".type");
  if (model_type != nullptr && model_type->as_string() != "CenterPoint") {
    c.expect(false, key + ".type",
             "CenterHead is configured by model CenterPoint's train_cfg and test_cfg; set " +
                 model + ".type: CenterPoint");
    return;
  }
  const config::Value* norm_bbox = c.at(key + ".norm_bbox");
  c.expect(norm_bbox == nullptr || norm_bbox->as_bool(), key + ".norm_bbox",
           "only log sizes are regressed (norm_bbox: true)");
  const config::Value* kernel = c.at(key + ".separate_head.final_kernel");
  c.expect(kernel == nullptr || kernel->as_int() % 2 == 1, key + ".separate_head.final_kernel",
           "must be odd, so the convs keep the heatmap's size");
  const config::Value* factor = c.at(key + ".bbox_coder.out_size_factor");
  const std::vector<std::int64_t> shape = c.ints(model + ".middle_encoder.output_shape");
  if (factor == nullptr || shape.size() != 2) return;
  const std::int64_t f = factor->as_int();
  c.expect(shape[0] % f == 0 && shape[1] % f == 0, key + ".bbox_coder.out_size_factor",
           std::to_string(f) + " does not divide the BEV grid " + config::show(shape) + " (" +
               c.origin(model + ".middle_encoder.output_shape") + ")");
}

// PointPillars' checks of the shared parts, and a head that reads this model's train_cfg.
void check_centerpoint_config(config::CrossCheck& c, const std::string& key) {
  check_pointpillars_config(c, key);
  const config::Value* head = c.at(key + ".bbox_head.type");
  c.expect(head == nullptr || head->as_string() != "Anchor3DHead", key + ".bbox_head.type",
           "Anchor3DHead needs anchors and assigners (model PointPillars' train_cfg); "
           "CenterPoint's head is CenterHead");
}

std::vector<config::Field> make_centerpoint_model_fields() {
  FieldTable<CenterPointTrainCfg> train = make_train_cfg_fields();
  FieldTable<CenterPointTestCfg> test = make_test_cfg_fields();
  std::vector<config::Field> fields = pointpillars_fields().fields();
  for (config::Field& f : fields) {
    if (f.first == "bbox_head") {
      f.second = S::component("bbox_head", "CenterHead")
                     .required()
                     .doc(
                         "the dense head (CenterHead: class heatmaps and box regression at "
                         "their peaks)");
    } else if (f.first == "train_cfg") {
      f.second = S::map(train.fields()).def_empty_map().doc("heatmap and regression targets");
    } else if (f.first == "test_cfg") {
      f.second = S::map(test.fields()).def_empty_map().doc("NMS after decoding");
    }
  }
  return fields;
}

}  // namespace

const FieldTable<CenterHeadOptions>& center_head_fields() {
  static const FieldTable<CenterHeadOptions> table = make_center_head_fields();
  return table;
}

const FieldTable<CenterPointTrainCfg>& centerpoint_train_cfg_fields() {
  static const FieldTable<CenterPointTrainCfg> table = make_train_cfg_fields();
  return table;
}

const FieldTable<CenterPointTestCfg>& centerpoint_test_cfg_fields() {
  static const FieldTable<CenterPointTestCfg> table = make_test_cfg_fields();
  return table;
}

void register_centerpoint_schemas(config::ComponentSchemas& schemas) {
  schemas.add("model", "CenterPoint", make_centerpoint_model_fields(), check_centerpoint_config);
  schemas.add("bbox_head", "CenterHead", center_head_fields().fields(), check_center_head);
}

}  // namespace ddp3d::models
