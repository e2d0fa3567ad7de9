#include "benchmarks/pointpillars/bench_spec.h"

#include "worker/config/field_table.h"
#include "worker/config/json.h"
#include "worker/config/value.h"
#include "worker/models/pointpillars/config.h"
#include "worker/models/pointpillars/engine_model.h"
#include "worker/models/pointpillars/fields.h"

namespace ddp3d::bench {
namespace {

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
      if (step.has("rot_range")) config::field_codec::read(step, "rot_range", a.rot_range);
      if (step.has("scale_ratio_range")) {
        config::field_codec::read(step, "scale_ratio_range", a.scale_range);
      }
    }
  }
  return a;
}

config::Value numbers(const auto& values) {
  std::vector<config::Value> items;
  for (const double v : values) items.push_back(config::Value::real(v));
  return config::Value::list(std::move(items));
}

config::Value strings(const std::vector<std::string>& values) {
  std::vector<config::Value> items;
  for (const std::string& v : values) items.push_back(config::Value::string(v));
  return config::Value::list(std::move(items));
}

}  // namespace

BenchSpec bench_spec_from_config(const config::Config& cfg, const std::string& path) {
  BenchSpec s;
  s.config = path;
  const config::Config model = cfg.node("model");
  s.model = models::pointpillars_options_from_config(model);

  s.voxel = models::voxelization_options(s.model.data_preprocessor.voxel_layer, /*train=*/true);

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
  if (opt.has("betas")) config::field_codec::read(opt, "betas", s.optim.betas);
  s.optim.weight_decay = opt.get_or<double>("weight_decay", s.optim.weight_decay);
  s.optim.eps = opt.get_or<double>("eps", s.optim.eps);
  s.optim.clip_max_norm = ow.get_or<double>("clip_grad.max_norm", 0.0);
  return s;
}

std::string to_json(const BenchSpec& s, std::int64_t num_parameters) {
  using config::Value;
  Value voxel = Value::map();
  voxel.set("point_cloud_range", numbers(s.voxel.point_cloud_range));
  voxel.set("voxel_size", numbers(s.voxel.voxel_size));
  voxel.set("max_points", Value::integer(s.voxel.max_points_per_voxel));
  voxel.set("max_voxels", Value::integer(s.voxel.max_voxels));
  Value augment = Value::map();
  augment.set("flip_ratio", Value::real(s.augment.flip_ratio));
  augment.set("rot_range", numbers(s.augment.rot_range));
  augment.set("scale_range", numbers(s.augment.scale_range));
  Value optim = Value::map();
  optim.set("lr", Value::real(s.optim.lr));
  optim.set("betas", numbers(s.optim.betas));
  optim.set("weight_decay", Value::real(s.optim.weight_decay));
  optim.set("eps", Value::real(s.optim.eps));
  optim.set("clip_max_norm", Value::real(s.optim.clip_max_norm));

  Value spec = Value::map();
  spec.set("config", Value::string(s.config));
  spec.set("classes", strings(s.classes));
  spec.set("batch_size", Value::integer(s.batch_size));
  spec.set("num_parameters", Value::integer(num_parameters));
  spec.set("voxel", std::move(voxel));
  spec.set("augment", std::move(augment));
  spec.set("optim", std::move(optim));
  // The network exactly as the C++ side reads it: the same tables as the config schema.
  spec.set("model", models::pointpillars_fields().to_value(s.model));
  return config::to_json(spec);
}

}  // namespace ddp3d::bench
