#include "benchmarks/pointpillars/bench_spec.h"

#include <iomanip>
#include <sstream>

#include "worker/models/pointpillars_config.h"

namespace ddp3d::bench {
namespace {

template <size_t N>
std::array<double, N> fixed(const config::Config& node, const std::string& key) {
  const auto v = node.get<std::vector<double>>(key);
  if (v.size() != N) {
    throw config::ConfigError(node.origin(key), node.path() + "." + key,
                              "expected " + std::to_string(N) + " numbers");
  }
  std::array<double, N> out{};
  for (size_t i = 0; i < N; ++i) out[i] = v[i];
  return out;
}

// The train dataset node: mmdet3d's full configs wrap it in a RepeatDataset.
config::Config train_dataset(const config::Config& cfg) {
  config::Config ds = cfg.node("train_dataloader.dataset");
  while (ds.has("dataset")) ds = ds.node("dataset");
  return ds;
}

// Flip and rotation/scale ranges from the train pipeline (the defaults are mmdet3d's KITTI
// values, which every config in configs/ uses).
AugmentSpec augment_from(const config::Config& dataset) {
  AugmentSpec a;
  if (!dataset.has("pipeline")) return a;
  for (const config::Config& step : dataset.list("pipeline")) {
    const auto type = step.get<std::string>("type");
    if (type == "RandomFlip3D") {
      a.flip_ratio = step.get_or<double>("flip_ratio_bev_horizontal", a.flip_ratio);
    } else if (type == "GlobalRotScaleTrans") {
      if (step.has("rot_range")) a.rot_range = fixed<2>(step, "rot_range");
      if (step.has("scale_ratio_range")) a.scale_range = fixed<2>(step, "scale_ratio_range");
    }
  }
  return a;
}

class JsonWriter {
 public:
  JsonWriter() { out_ << std::setprecision(17); }
  JsonWriter& key(const std::string& k) {
    comma();
    out_ << '"' << k << "\":";
    fresh_ = true;
    return *this;
  }
  JsonWriter& open(char bracket) {
    comma();
    out_ << bracket;
    fresh_ = true;
    return *this;
  }
  JsonWriter& close(char bracket) {
    out_ << bracket;
    fresh_ = false;
    return *this;
  }
  template <typename T>
  JsonWriter& value(const T& v) {
    comma();
    if constexpr (std::is_same_v<T, bool>) {
      out_ << (v ? "true" : "false");
    } else if constexpr (std::is_convertible_v<T, std::string>) {
      out_ << '"' << std::string(v) << '"';
    } else {
      out_ << v;
    }
    fresh_ = false;
    return *this;
  }
  template <typename Range>
  JsonWriter& list(const Range& values) {
    open('[');
    for (const auto& v : values) value(v);
    return close(']');
  }
  template <typename T>
  JsonWriter& field(const std::string& k, const T& v) {
    key(k);
    if constexpr (requires { v.begin(); } && !std::is_convertible_v<T, std::string>) {
      return list(v);
    } else {
      return value(v);
    }
  }
  std::string str() const { return out_.str(); }

 private:
  void comma() {
    if (!fresh_) out_ << ',';
    fresh_ = false;
  }
  std::ostringstream out_;
  bool fresh_ = true;
};

void write_norm(JsonWriter& j, const models::NormCfg& n) {
  j.key("norm_cfg").open('{').field("eps", n.eps).field("momentum", n.momentum).close('}');
}

}  // namespace

BenchSpec bench_spec_from_config(const config::Config& cfg, const std::string& path) {
  BenchSpec s;
  s.config = path;
  const config::Config model = cfg.node("model");
  s.model = models::pointpillars_options_from_config(model);

  const config::Config vl = model.node("data_preprocessor.voxel_layer");
  s.voxel.point_cloud_range = fixed<6>(vl, "point_cloud_range");
  s.voxel.voxel_size = fixed<3>(vl, "voxel_size");
  s.voxel.max_points_per_voxel = vl.get<int>("max_num_points");
  // max_voxels: [train, test] or one number for both.
  const config::Config mv = vl.node("max_voxels");
  s.voxel.max_voxels =
      mv.is_list() ? vl.get<std::vector<int>>("max_voxels").at(0) : vl.get<int>("max_voxels");

  const config::Config ds = train_dataset(cfg);
  s.classes = ds.get<std::vector<std::string>>("metainfo.classes");
  s.augment = augment_from(ds);
  s.batch_size = cfg.get<int>("train_dataloader.batch_size");

  const config::Config ow = cfg.node("optim_wrapper");
  const config::Config opt = ow.node("optimizer");
  const auto type = opt.get<std::string>("type");
  if (type != "AdamW") {
    throw config::ConfigError(
        opt.origin("type"), "optim_wrapper.optimizer.type",
        "the benchmark drives AdamW (mmdet3d's PointPillars optimizer), got " + type);
  }
  s.optim.lr = opt.get<double>("lr");
  if (opt.has("betas")) s.optim.betas = fixed<2>(opt, "betas");
  s.optim.weight_decay = opt.get_or<double>("weight_decay", s.optim.weight_decay);
  s.optim.eps = opt.get_or<double>("eps", s.optim.eps);
  s.optim.clip_max_norm = ow.get_or<double>("clip_grad.max_norm", 0.0);
  return s;
}

std::string to_json(const BenchSpec& s, std::int64_t num_parameters) {
  const models::PointPillarsOptions& m = s.model;
  JsonWriter j;
  j.open('{');
  j.field("config", s.config).field("classes", s.classes).field("batch_size", s.batch_size);
  j.field("num_parameters", num_parameters);
  j.key("voxel").open('{');
  j.field("point_cloud_range", s.voxel.point_cloud_range)
      .field("voxel_size", s.voxel.voxel_size)
      .field("max_points", s.voxel.max_points_per_voxel)
      .field("max_voxels", s.voxel.max_voxels)
      .close('}');
  j.key("augment").open('{');
  j.field("flip_ratio", s.augment.flip_ratio)
      .field("rot_range", s.augment.rot_range)
      .field("scale_range", s.augment.scale_range)
      .close('}');
  j.key("optim").open('{');
  j.field("lr", s.optim.lr)
      .field("betas", s.optim.betas)
      .field("weight_decay", s.optim.weight_decay)
      .field("eps", s.optim.eps)
      .field("clip_max_norm", s.optim.clip_max_norm)
      .close('}');

  j.key("model").open('{');
  const auto& ve = m.voxel_encoder;
  j.key("voxel_encoder").open('{');
  j.field("in_channels", ve.in_channels)
      .field("feat_channels", ve.feat_channels)
      .field("with_distance", ve.with_distance)
      .field("with_cluster_center", ve.with_cluster_center)
      .field("with_voxel_center", ve.with_voxel_center)
      .field("voxel_size", ve.voxel_size)
      .field("point_cloud_range", ve.point_cloud_range)
      .field("mode", ve.mode)
      .field("legacy", ve.legacy);
  write_norm(j, ve.norm_cfg);
  j.close('}');
  j.key("middle_encoder").open('{');
  j.field("in_channels", m.middle_encoder.in_channels)
      .field("output_shape", m.middle_encoder.output_shape)
      .close('}');
  j.key("backbone").open('{');
  j.field("in_channels", m.backbone.in_channels)
      .field("out_channels", m.backbone.out_channels)
      .field("layer_nums", m.backbone.layer_nums)
      .field("layer_strides", m.backbone.layer_strides);
  write_norm(j, m.backbone.norm_cfg);
  j.close('}');
  j.key("neck").open('{');
  j.field("in_channels", m.neck.in_channels)
      .field("out_channels", m.neck.out_channels)
      .field("upsample_strides", m.neck.upsample_strides)
      .field("use_conv_for_no_stride", m.neck.use_conv_for_no_stride);
  write_norm(j, m.neck.norm_cfg);
  j.close('}');
  const auto& hd = m.bbox_head;
  j.key("bbox_head").open('{');
  j.field("num_classes", hd.num_classes)
      .field("in_channels", hd.in_channels)
      .field("feat_channels", hd.feat_channels)
      .field("use_direction_classifier", hd.use_direction_classifier)
      .field("assign_per_class", hd.assign_per_class)
      .field("diff_rad_by_sin", hd.diff_rad_by_sin)
      .field("dir_offset", hd.dir_offset)
      .field("dir_limit_offset", hd.dir_limit_offset);
  j.key("anchor_generator").open('{');
  j.key("ranges").open('[');
  for (const auto& r : hd.anchor_generator.ranges) j.list(r);
  j.close(']');
  j.key("sizes").open('[');
  for (const auto& sz : hd.anchor_generator.sizes) j.list(sz);
  j.close(']');
  j.field("rotations", hd.anchor_generator.rotations)
      .field("align_corner", hd.anchor_generator.align_corner)
      .close('}');
  j.key("loss_cls").open('{');
  j.field("gamma", hd.loss_cls.gamma)
      .field("alpha", hd.loss_cls.alpha)
      .field("loss_weight", hd.loss_cls.loss_weight)
      .close('}');
  j.key("loss_bbox").open('{');
  j.field("beta", hd.loss_bbox.beta).field("loss_weight", hd.loss_bbox.loss_weight).close('}');
  j.key("loss_dir").open('{').field("loss_weight", hd.loss_dir.loss_weight).close('}');
  j.close('}');  // bbox_head
  j.key("train_cfg").open('{');
  j.key("assigner").open('[');
  for (const auto& a : m.train_cfg.assigner) {
    j.open('{')
        .field("pos_iou_thr", a.pos_iou_thr)
        .field("neg_iou_thr", a.neg_iou_thr)
        .field("min_pos_iou", a.min_pos_iou)
        .field("gt_max_assign_all", a.gt_max_assign_all)
        .field("match_low_quality", a.match_low_quality)
        .close('}');
  }
  j.close(']');
  j.field("code_weight", m.train_cfg.code_weight).field("pos_weight", m.train_cfg.pos_weight);
  j.close('}');  // train_cfg
  j.close('}');  // model
  j.close('}');
  return j.str();
}

}  // namespace ddp3d::bench
