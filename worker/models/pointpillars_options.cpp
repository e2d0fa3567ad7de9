#include "worker/models/pointpillars_options.h"

#include <cmath>
#include <numeric>
#include <sstream>
#include <stdexcept>

namespace ddp3d::models {
namespace {

[[noreturn]] void fail(const std::string& key, const std::string& why) {
  throw std::invalid_argument("invalid model option " + key + ": " + why);
}

template <typename T>
std::string str(const std::vector<T>& v) {
  std::ostringstream out;
  out << '[';
  for (size_t i = 0; i < v.size(); ++i) out << (i ? ", " : "") << v[i];
  out << ']';
  return out.str();
}

void require_positive(const std::vector<int64_t>& values, const std::string& key) {
  if (values.empty()) fail(key, "must not be empty");
  for (const int64_t v : values) {
    if (v <= 0) fail(key, "every entry must be > 0, got " + str(values));
  }
}

}  // namespace

NormType parse_norm_type(const std::string& type) {
  // mmcv registers BatchNorm as 'BN', 'BN1d', 'BN2d' (the dimension follows from the layer).
  if (type == "BN" || type == "BN1d" || type == "BN2d") return NormType::kBatchNorm;
  if (type == "SyncBN") return NormType::kSyncBatchNorm;
  throw std::invalid_argument("unknown norm type '" + type +
                              "' (expected one of BN, BN1d, BN2d, SyncBN)");
}

PointPillarsOptions pointpillars_kitti_3class_options() {
  return PointPillarsOptions{};
}

PointPillarsOptions pointpillars_kitti_car_options() {
  PointPillarsOptions o;
  o.bbox_head.num_classes = 1;
  o.bbox_head.anchor_generator.ranges = {{0.0, -39.68, -1.78, 69.12, 39.68, -1.78}};
  o.bbox_head.anchor_generator.sizes = {{3.9, 1.6, 1.56}};
  o.train_cfg.assigner = {{0.6, 0.45, 0.45, true, true}};
  return o;
}

void validate(const PointPillarsOptions& o) {
  const auto& ve = o.voxel_encoder;
  if (ve.in_channels < 3) {
    fail("model.voxel_encoder.in_channels",
         "must be >= 3 (x, y, z first), got " + std::to_string(ve.in_channels));
  }
  require_positive(ve.feat_channels, "model.voxel_encoder.feat_channels");
  for (size_t i = 0; i + 1 < ve.feat_channels.size(); ++i) {
    if (ve.feat_channels[i] % 2 != 0) {
      fail("model.voxel_encoder.feat_channels",
           "inner layers concatenate point and pillar features, so they must be even, got " +
               str(ve.feat_channels));
    }
  }
  if (ve.mode != "max" && ve.mode != "avg") {
    fail("model.voxel_encoder.mode", "must be 'max' or 'avg', got '" + ve.mode + "'");
  }
  for (const double v : ve.voxel_size) {
    if (v <= 0) fail("model.voxel_encoder.voxel_size", "every entry must be > 0");
  }
  if (ve.norm_cfg.eps <= 0) fail("model.voxel_encoder.norm_cfg.eps", "must be > 0");

  const auto& me = o.middle_encoder;
  if (me.in_channels != ve.feat_channels.back()) {
    fail("model.middle_encoder.in_channels",
         "must equal voxel_encoder.feat_channels[-1] = " + std::to_string(ve.feat_channels.back()) +
             ", got " + std::to_string(me.in_channels));
  }
  if (me.output_shape[0] <= 0 || me.output_shape[1] <= 0) {
    fail("model.middle_encoder.output_shape", "must be positive [ny, nx]");
  }

  const auto& bb = o.backbone;
  if (bb.in_channels != me.in_channels) {
    fail("model.backbone.in_channels",
         "must equal middle_encoder.in_channels = " + std::to_string(me.in_channels));
  }
  require_positive(bb.out_channels, "model.backbone.out_channels");
  require_positive(bb.layer_strides, "model.backbone.layer_strides");
  if (bb.layer_nums.size() != bb.out_channels.size() ||
      bb.layer_strides.size() != bb.out_channels.size()) {
    fail("model.backbone.layer_nums",
         "layer_nums, layer_strides and out_channels must have the same length, got " +
             str(bb.layer_nums) + ", " + str(bb.layer_strides) + ", " + str(bb.out_channels));
  }
  for (const int64_t n : bb.layer_nums) {
    if (n < 0) fail("model.backbone.layer_nums", "entries must be >= 0, got " + str(bb.layer_nums));
  }

  const auto& nk = o.neck;
  if (nk.in_channels != bb.out_channels) {
    fail("model.neck.in_channels", "must equal backbone.out_channels " + str(bb.out_channels) +
                                       ", got " + str(nk.in_channels));
  }
  require_positive(nk.out_channels, "model.neck.out_channels");
  if (nk.out_channels.size() != nk.in_channels.size() ||
      nk.upsample_strides.size() != nk.in_channels.size()) {
    fail("model.neck.upsample_strides",
         "upsample_strides, in_channels and out_channels must have the same length");
  }
  for (const double s : nk.upsample_strides) {
    if (s <= 0) fail("model.neck.upsample_strides", "entries must be > 0");
  }

  // Every neck branch must come back to the same BEV size, or SECONDFPN cannot concatenate
  // them (e.g. a 124-cell grid: 62 → 31 → 16 cells, and 16 · 4 ≠ 62).
  for (size_t axis = 0; axis < 2; ++axis) {
    int64_t size = me.output_shape[axis];
    std::vector<int64_t> branch;
    for (size_t i = 0; i < bb.layer_strides.size(); ++i) {
      size = (size - 1) / bb.layer_strides[i] + 1;  // 3×3 conv, padding 1
      const double up = nk.upsample_strides[i];
      branch.push_back(up >= 1 ? size * static_cast<int64_t>(up)
                               : size / static_cast<int64_t>(std::lround(1.0 / up)));
    }
    for (const int64_t b : branch) {
      if (b != branch.front()) {
        fail("model.middle_encoder.output_shape",
             "the " + std::string(axis == 0 ? "y" : "x") + " size " +
                 std::to_string(me.output_shape[axis]) +
                 " gives neck branches of different sizes " + str(branch) +
                 " (with backbone.layer_strides " + str(bb.layer_strides) +
                 " and neck.upsample_strides); use a multiple of the total stride");
      }
    }
  }

  const auto& hd = o.bbox_head;
  const int64_t neck_out =
      std::accumulate(nk.out_channels.begin(), nk.out_channels.end(), int64_t{0});
  if (hd.in_channels != neck_out) {
    fail("model.bbox_head.in_channels",
         "must equal the sum of neck.out_channels = " + std::to_string(neck_out) + ", got " +
             std::to_string(hd.in_channels));
  }
  if (hd.feat_channels != hd.in_channels) {
    fail("model.bbox_head.feat_channels",
         "must equal bbox_head.in_channels (the head has no "
         "shared convs), got " +
             std::to_string(hd.feat_channels));
  }
  if (hd.num_classes <= 0) fail("model.bbox_head.num_classes", "must be > 0");
  const auto& ag = hd.anchor_generator;
  if (ag.sizes.empty()) fail("model.bbox_head.anchor_generator.sizes", "must not be empty");
  if (ag.rotations.empty()) fail("model.bbox_head.anchor_generator.rotations", "must not be empty");
  if (ag.ranges.size() != ag.sizes.size() && ag.ranges.size() != 1) {
    fail("model.bbox_head.anchor_generator.ranges",
         "needs one range per size or a single range, got " + std::to_string(ag.ranges.size()) +
             " ranges for " + std::to_string(ag.sizes.size()) + " sizes");
  }
  for (const auto& s : ag.sizes) {
    if (s[0] <= 0 || s[1] <= 0 || s[2] <= 0) {
      fail("model.bbox_head.anchor_generator.sizes", "every size must be > 0");
    }
  }
  for (const auto& r : ag.ranges) {
    if (r[3] < r[0] || r[4] < r[1]) {
      fail("model.bbox_head.anchor_generator.ranges", "each range must have max >= min");
    }
  }
  if (hd.loss_bbox.beta <= 0) fail("model.bbox_head.loss_bbox.beta", "must be > 0");

  const auto& tc = o.train_cfg;
  if (tc.assigner.size() != 1 && tc.assigner.size() != ag.sizes.size()) {
    fail("model.train_cfg.assigner", "needs one assigner, or one per anchor size (" +
                                         std::to_string(ag.sizes.size()) + "), got " +
                                         std::to_string(tc.assigner.size()));
  }
  if (tc.assigner.size() > 1 && hd.assign_per_class &&
      static_cast<int64_t>(ag.sizes.size()) != hd.num_classes) {
    fail("model.bbox_head.assign_per_class",
         "per-class assignment needs one anchor size per class (num_classes = " +
             std::to_string(hd.num_classes) + ", sizes = " + std::to_string(ag.sizes.size()) + ")");
  }
  for (const auto& a : tc.assigner) {
    if (a.neg_iou_thr > a.pos_iou_thr) {
      fail("model.train_cfg.assigner", "neg_iou_thr must be <= pos_iou_thr");
    }
  }
  if (!tc.code_weight.empty() && tc.code_weight.size() != 7) {
    fail("model.train_cfg.code_weight",
         "must have 7 entries (one per box code), got " + std::to_string(tc.code_weight.size()));
  }
  if (o.test_cfg.max_num <= 0) fail("model.test_cfg.max_num", "must be > 0");
  if (!o.test_cfg.use_rotate_nms) {
    fail("model.test_cfg.use_rotate_nms", "only rotated BEV NMS is implemented (set it true)");
  }
}

}  // namespace ddp3d::models
