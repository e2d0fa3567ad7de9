#include "worker/models/pointpillars/checks.h"

#include <cmath>
#include <numeric>
#include <sstream>

namespace ddp3d::models {
namespace {

template <typename T>
std::string str(const std::vector<T>& v) {
  std::ostringstream out;
  out << '[';
  for (size_t i = 0; i < v.size(); ++i) out << (i ? ", " : "") << v[i];
  out << ']';
  return out.str();
}

class Rules {
 public:
  explicit Rules(OptionIssues& issues) : issues_(issues) {}

  void expect(bool ok, const std::string& key, const std::string& message) {
    if (!ok) issues_.report(key, message);
  }
  void positive(const std::vector<int64_t>& values, const std::string& key) {
    if (values.empty()) return issues_.report(key, "must not be empty");
    for (const int64_t v : values) {
      if (v <= 0) return issues_.report(key, "every entry must be > 0, got " + str(values));
    }
  }
  void count(std::size_t got, std::size_t want, const std::string& key, const char* per) {
    expect(got == want, key, "expected " + std::to_string(want) + " entries (one per " + per + ")");
  }

 private:
  OptionIssues& issues_;
};

void check_voxel_encoder(const PillarFeatureNetOptions& ve, Rules& r) {
  const std::string k = "model.voxel_encoder.";
  r.expect(ve.in_channels >= 3, k + "in_channels",
           "must be >= 3 (x, y, z first), got " + std::to_string(ve.in_channels));
  r.positive(ve.feat_channels, k + "feat_channels");
  for (size_t i = 0; i + 1 < ve.feat_channels.size(); ++i) {
    r.expect(ve.feat_channels[i] % 2 == 0, k + "feat_channels",
             "inner layers concatenate point and pillar features, so they must be even, got " +
                 str(ve.feat_channels));
  }
  r.expect(ve.mode == "max" || ve.mode == "avg", k + "mode",
           "must be 'max' or 'avg', got '" + ve.mode + "'");
  for (const double v : ve.voxel_size) {
    r.expect(v > 0, k + "voxel_size", "every entry must be > 0");
  }
  r.expect(ve.norm_cfg.eps > 0, k + "norm_cfg.eps", "must be > 0");
}

// Every neck branch must come back to the same BEV size, or SECONDFPN cannot concatenate them
// (e.g. a 124-cell grid: 62 → 31 → 16 cells, and 16 · 4 ≠ 62).
void check_branch_sizes(const PointPillarsOptions& o, Rules& r) {
  const auto& strides = o.backbone.layer_strides;
  const auto& up = o.neck.upsample_strides;
  if (up.size() != strides.size()) return;
  for (size_t axis = 0; axis < 2; ++axis) {
    int64_t size = o.middle_encoder.output_shape[axis];
    std::vector<int64_t> branch;
    for (size_t i = 0; i < strides.size(); ++i) {
      if (strides[i] <= 0 || up[i] <= 0) return;
      size = (size - 1) / strides[i] + 1;  // 3×3 conv, padding 1
      branch.push_back(up[i] >= 1 ? size * static_cast<int64_t>(up[i])
                                  : size / static_cast<int64_t>(std::lround(1.0 / up[i])));
    }
    for (const int64_t b : branch) {
      if (b == branch.front()) continue;
      r.expect(false, "model.middle_encoder.output_shape",
               "the " + std::string(axis == 0 ? "y" : "x") + " size " +
                   std::to_string(o.middle_encoder.output_shape[axis]) +
                   " gives neck branches of different sizes " + str(branch) +
                   " (with backbone.layer_strides " + str(strides) +
                   " and neck.upsample_strides); use a multiple of the total stride");
      break;
    }
  }
}

void check_head(const Anchor3DHeadOptions& hd, Rules& r) {
  const std::string k = "model.bbox_head.";
  r.expect(hd.feat_channels == hd.in_channels, k + "feat_channels",
           "must equal bbox_head.in_channels (the head has no shared convs), got " +
               std::to_string(hd.feat_channels));
  r.expect(hd.num_classes > 0, k + "num_classes", "must be > 0");
  const std::string ag = k + "anchor_generator.";
  const auto& gen = hd.anchor_generator;
  r.expect(!gen.sizes.empty(), ag + "sizes", "must not be empty");
  r.expect(!gen.rotations.empty(), ag + "rotations", "must not be empty");
  for (const auto& s : gen.sizes) {
    r.expect(s[0] > 0 && s[1] > 0 && s[2] > 0, ag + "sizes", "every size must be > 0");
  }
  for (const auto& range : gen.ranges) {
    r.expect(range[3] >= range[0] && range[4] >= range[1], ag + "ranges",
             "each range must have max >= min");
  }
  r.expect(hd.loss_bbox.beta > 0, k + "loss_bbox.beta", "must be > 0");
}

void check_assigner_values(const Anchor3DHeadOptions& hd, const TrainCfg& tc, Rules& r) {
  const std::size_t sizes = hd.anchor_generator.sizes.size();
  const std::size_t assigners = tc.assigner.size();
  if (!hd.assign_per_class) {
    r.expect(assigners == 1 || assigners == sizes, "model.train_cfg.assigner",
             "expected one assigner, or one per anchor size (" + std::to_string(sizes) + "), got " +
                 std::to_string(assigners));
  }
  for (const auto& a : tc.assigner) {
    r.expect(a.neg_iou_thr <= a.pos_iou_thr, "model.train_cfg.assigner",
             "neg_iou_thr must be <= pos_iou_thr");
  }
  r.expect(tc.code_weight.empty() || tc.code_weight.size() == 7, "model.train_cfg.code_weight",
           "must have 7 entries (one per box code), got " + std::to_string(tc.code_weight.size()));
}

}  // namespace

void check_second_stages(const SECONDOptions& bb, OptionIssues& issues) {
  Rules r(issues);
  const std::size_t stages = bb.out_channels.size();
  r.count(bb.layer_nums.size(), stages, "model.backbone.layer_nums", "backbone stage");
  r.count(bb.layer_strides.size(), stages, "model.backbone.layer_strides", "backbone stage");
}

void check_connections(const PointPillarsOptions& o, OptionIssues& issues) {
  Rules r(issues);
  const auto& pfn = o.voxel_encoder.feat_channels;
  const auto& me = o.middle_encoder;
  if (!pfn.empty()) {
    r.expect(me.in_channels == pfn.back(), "model.middle_encoder.in_channels",
             "expected " + std::to_string(pfn.back()) +
                 " (the last of model.voxel_encoder.feat_channels), got " +
                 std::to_string(me.in_channels));
  }
  r.expect(o.backbone.in_channels == me.in_channels, "model.backbone.in_channels",
           "expected " + std::to_string(me.in_channels) +
               " (model.middle_encoder.in_channels), got " +
               std::to_string(o.backbone.in_channels));
  const auto& nk = o.neck;
  r.expect(nk.in_channels == o.backbone.out_channels, "model.neck.in_channels",
           "expected " + str(o.backbone.out_channels) + " (model.backbone.out_channels), got " +
               str(nk.in_channels));
  r.count(nk.out_channels.size(), nk.in_channels.size(), "model.neck.out_channels", "input stage");
  if (o.neck_type == "SECONDFPN") {
    r.count(nk.upsample_strides.size(), nk.in_channels.size(), "model.neck.upsample_strides",
            "input stage");
  }
  const auto& hd = o.bbox_head;
  const int64_t concat =
      std::accumulate(nk.out_channels.begin(), nk.out_channels.end(), int64_t{0});
  r.expect(hd.in_channels == concat, "model.bbox_head.in_channels",
           "expected " + std::to_string(concat) + " (the sum of model.neck.out_channels), got " +
               std::to_string(hd.in_channels));
  // Anchors and their assigners are Anchor3DHead's; another head brings its own checks.
  if (o.bbox_head_type != "Anchor3DHead") return;
  const std::string ag = "model.bbox_head.anchor_generator.";
  const std::size_t sizes = hd.anchor_generator.sizes.size();
  const std::size_t ranges = hd.anchor_generator.ranges.size();
  r.expect(ranges == 1 || ranges == sizes, ag + "ranges",
           "expected 1 range or one per anchor size (" + std::to_string(sizes) + "), got " +
               std::to_string(ranges));
  if (hd.assign_per_class) {
    const int64_t classes = hd.num_classes;
    const std::size_t assigners = o.train_cfg.assigner.size();
    r.expect(static_cast<int64_t>(sizes) == classes, ag + "sizes",
             "expected one anchor size per class (" + std::to_string(classes) +
                 ", model.bbox_head.num_classes) with assign_per_class, got " +
                 std::to_string(sizes));
    r.expect(static_cast<int64_t>(assigners) == classes, "model.train_cfg.assigner",
             "expected one assigner per class (" + std::to_string(classes) +
                 ") with assign_per_class, got " + std::to_string(assigners));
  }
}

void check_parts(const PointPillarsOptions& o, OptionIssues& issues) {
  Rules r(issues);
  if (o.voxel_encoder_type == "PillarFeatureNet") check_voxel_encoder(o.voxel_encoder, r);
  const auto& me = o.middle_encoder;
  r.expect(me.output_shape[0] > 0 && me.output_shape[1] > 0, "model.middle_encoder.output_shape",
           "must be positive [ny, nx]");
  r.positive(o.backbone.out_channels, "model.backbone.out_channels");
  if (o.backbone_type == "SECOND") {
    const SECONDOptions& bb = o.backbone;
    r.positive(bb.layer_strides, "model.backbone.layer_strides");
    for (const int64_t n : bb.layer_nums) {
      r.expect(n >= 0, "model.backbone.layer_nums",
               "entries must be >= 0, got " + str(bb.layer_nums));
    }
    if (o.neck_type == "SECONDFPN") check_branch_sizes(o, r);
  }
  r.positive(o.neck.out_channels, "model.neck.out_channels");
  if (o.neck_type == "SECONDFPN") {
    for (const double s : o.neck.upsample_strides) {
      r.expect(s > 0, "model.neck.upsample_strides", "entries must be > 0");
    }
  }
  if (o.bbox_head_type == "Anchor3DHead") {
    check_head(o.bbox_head, r);
    check_assigner_values(o.bbox_head, o.train_cfg, r);
  }
  r.expect(o.test_cfg.max_num > 0, "model.test_cfg.max_num", "must be > 0");
  r.expect(o.test_cfg.use_rotate_nms, "model.test_cfg.use_rotate_nms",
           "only rotated BEV NMS is implemented (set it true)");
}

}  // namespace ddp3d::models
