#include "worker/models/pointpillars_config.h"

#include <stdexcept>
#include <string>
#include <vector>

namespace ddp3d::models {
namespace {

template <size_t N>
std::array<double, N> to_array(const std::vector<double>& v, const config::Config& cfg,
                               const std::string& key) {
  if (v.size() != N) {
    throw config::ConfigError(
        cfg.origin(key), cfg.path() + "." + key,
        "expected " + std::to_string(N) + " numbers, got " + std::to_string(v.size()));
  }
  std::array<double, N> out{};
  for (size_t i = 0; i < N; ++i) out[i] = v[i];
  return out;
}

NormCfg norm_cfg(const config::Config& parent, NormCfg fallback) {
  if (!parent.has("norm_cfg")) return fallback;
  const config::Config n = parent.node("norm_cfg");
  NormCfg cfg{fallback.type, n.get_or<double>("eps", fallback.eps),
              n.get_or<double>("momentum", fallback.momentum)};
  if (n.has("type")) {
    try {
      cfg.type = parse_norm_type(n.get<std::string>("type"));
    } catch (const std::invalid_argument& e) {
      throw config::ConfigError(n.origin("type"), n.path() + ".type", e.what());
    }
  }
  return cfg;
}

}  // namespace

PointPillarsOptions pointpillars_options_from_config(const config::Config& model) {
  PointPillarsOptions o;

  // voxel_encoder; its geometry defaults to the voxelizer's (as mmdet3d configs repeat it).
  const config::Config ve = model.node("voxel_encoder");
  const config::Config voxel_layer = model.node("data_preprocessor.voxel_layer");
  auto& pfn = o.voxel_encoder;
  pfn.in_channels = ve.get_or<int64_t>("in_channels", pfn.in_channels);
  pfn.feat_channels = ve.get_or<std::vector<int64_t>>("feat_channels", pfn.feat_channels);
  pfn.with_distance = ve.get_or<bool>("with_distance", pfn.with_distance);
  pfn.with_cluster_center = ve.get_or<bool>("with_cluster_center", pfn.with_cluster_center);
  pfn.with_voxel_center = ve.get_or<bool>("with_voxel_center", pfn.with_voxel_center);
  const config::Config& vs_src = ve.has("voxel_size") ? ve : voxel_layer;
  pfn.voxel_size = to_array<3>(vs_src.get<std::vector<double>>("voxel_size"), vs_src, "voxel_size");
  const config::Config& pcr_src = ve.has("point_cloud_range") ? ve : voxel_layer;
  pfn.point_cloud_range = to_array<6>(pcr_src.get<std::vector<double>>("point_cloud_range"),
                                      pcr_src, "point_cloud_range");
  pfn.norm_cfg = norm_cfg(ve, pfn.norm_cfg);
  pfn.mode = ve.get_or<std::string>("mode", pfn.mode);
  pfn.legacy = ve.get_or<bool>("legacy", pfn.legacy);

  const config::Config me = model.node("middle_encoder");
  o.middle_encoder.in_channels = me.get_or<int64_t>("in_channels", o.middle_encoder.in_channels);
  const auto shape = me.get<std::vector<int64_t>>("output_shape");
  if (shape.size() != 2) {
    throw config::ConfigError(me.origin("output_shape"), me.path() + ".output_shape",
                              "expected [ny, nx]");
  }
  o.middle_encoder.output_shape = {shape[0], shape[1]};

  const config::Config bb = model.node("backbone");
  o.backbone.in_channels = bb.get_or<int64_t>("in_channels", o.backbone.in_channels);
  o.backbone.layer_nums = bb.get<std::vector<int64_t>>("layer_nums");
  o.backbone.layer_strides = bb.get<std::vector<int64_t>>("layer_strides");
  o.backbone.out_channels = bb.get<std::vector<int64_t>>("out_channels");
  o.backbone.norm_cfg = norm_cfg(bb, o.backbone.norm_cfg);

  const config::Config nk = model.node("neck");
  o.neck.in_channels = nk.get<std::vector<int64_t>>("in_channels");
  o.neck.upsample_strides = nk.get<std::vector<double>>("upsample_strides");
  o.neck.out_channels = nk.get<std::vector<int64_t>>("out_channels");
  o.neck.norm_cfg = norm_cfg(nk, o.neck.norm_cfg);
  o.neck.use_conv_for_no_stride = nk.get_or<bool>("use_conv_for_no_stride", false);

  const config::Config hd = model.node("bbox_head");
  auto& head = o.bbox_head;
  head.num_classes = hd.get<int64_t>("num_classes");
  head.in_channels = hd.get<int64_t>("in_channels");
  head.feat_channels = hd.get<int64_t>("feat_channels");
  head.use_direction_classifier = hd.get_or<bool>("use_direction_classifier", true);
  head.assign_per_class = hd.get_or<bool>("assign_per_class", true);
  head.diff_rad_by_sin = hd.get_or<bool>("diff_rad_by_sin", true);
  head.dir_offset = hd.get_or<double>("dir_offset", head.dir_offset);
  head.dir_limit_offset = hd.get_or<double>("dir_limit_offset", head.dir_limit_offset);
  const config::Config ag = hd.node("anchor_generator");
  head.anchor_generator.ranges.clear();
  for (const auto& r : ag.get<std::vector<std::vector<double>>>("ranges")) {
    head.anchor_generator.ranges.push_back(to_array<6>(r, ag, "ranges"));
  }
  head.anchor_generator.sizes.clear();
  for (const auto& s : ag.get<std::vector<std::vector<double>>>("sizes")) {
    head.anchor_generator.sizes.push_back(to_array<3>(s, ag, "sizes"));
  }
  head.anchor_generator.rotations =
      ag.get_or<std::vector<double>>("rotations", head.anchor_generator.rotations);
  head.anchor_generator.align_corner = ag.get_or<bool>("align_corner", false);
  if (hd.has("loss_cls")) {
    const config::Config l = hd.node("loss_cls");
    head.loss_cls = {l.get_or<double>("gamma", 2.0), l.get_or<double>("alpha", 0.25),
                     l.get_or<double>("loss_weight", 1.0)};
  }
  if (hd.has("loss_bbox")) {
    const config::Config l = hd.node("loss_bbox");
    head.loss_bbox = {l.get_or<double>("beta", 1.0 / 9.0), l.get_or<double>("loss_weight", 2.0)};
  }
  if (hd.has("loss_dir")) head.loss_dir = {hd.node("loss_dir").get_or<double>("loss_weight", 0.2)};

  const config::Config tc = model.node("train_cfg");
  o.train_cfg.assigner.clear();
  // The schema turns a single assigner mapping into a one-element list.
  for (const config::Config& a : tc.list("assigner")) {
    o.train_cfg.assigner.push_back(
        {a.get<double>("pos_iou_thr"), a.get<double>("neg_iou_thr"), a.get<double>("min_pos_iou"),
         a.get_or<bool>("gt_max_assign_all", true), a.get_or<bool>("match_low_quality", true)});
  }
  o.train_cfg.code_weight = tc.get_or<std::vector<double>>("code_weight", {});
  o.train_cfg.pos_weight = tc.get_or<double>("pos_weight", -1.0);

  const config::Config ts = model.node("test_cfg");
  o.test_cfg.use_rotate_nms = ts.get_or<bool>("use_rotate_nms", true);
  o.test_cfg.nms_thr = ts.get_or<double>("nms_thr", o.test_cfg.nms_thr);
  o.test_cfg.score_thr = ts.get_or<double>("score_thr", o.test_cfg.score_thr);
  o.test_cfg.nms_pre = ts.get_or<int64_t>("nms_pre", o.test_cfg.nms_pre);
  o.test_cfg.max_num = ts.get_or<int64_t>("max_num", o.test_cfg.max_num);

  validate(o);
  return o;
}

}  // namespace ddp3d::models
