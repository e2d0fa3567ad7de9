#include "worker/detection/detection_pipeline.h"

#include <ATen/ATen.h>

#include <array>
#include <memory>
#include <numbers>

#include "common/log.h"
#include "worker/detection/object_augment.h"

namespace ddp3d::detection {
namespace {

std::array<double, 6> range6(const config::Config& t, const char* key) {
  const auto v = t.get<std::vector<double>>(key);
  if (v.size() != 6) {
    throw config::ConfigError(t.origin(key), t.path() + "." + key, "expected 6 numbers");
  }
  return {v[0], v[1], v[2], v[3], v[4], v[5]};
}

std::array<double, 2> pair(const config::Config& t, const char* key) {
  const auto v = t.get<std::vector<double>>(key);
  if (v.size() != 2) {
    throw config::ConfigError(t.origin(key), t.path() + "." + key, "expected 2 numbers");
  }
  return {v[0], v[1]};
}

// RandomFlip3D's vertical flip: x -> -x, yaw -> pi - yaw.
void flip_bev_vertical(data::DetectionSample& s) {
  s.points = s.points.clone();
  s.points.select(1, 0).neg_();
  if (s.gt_boxes.size(0) == 0) return;
  s.gt_boxes = s.gt_boxes.clone();
  s.gt_boxes.select(1, 0).neg_();
  s.gt_boxes.select(1, 6).neg_().add_(std::numbers::pi);
}

DetectionPipeline::Step object_sample_step(const config::Config& t, const config::Config& dataset,
                                           std::int64_t use_dim) {
  const config::Config db = t.node("db_sampler");
  ObjectSampleOptions o;
  o.data_root = db.get<std::string>("data_root");
  o.info_path = db.get<std::string>("info_path");
  o.filter_by_difficulty = db.get<std::vector<int>>("prepare.filter_by_difficulty");
  if (db.has("prepare.filter_by_min_points")) {
    const config::Config m = db.node("prepare.filter_by_min_points");
    for (const std::string& k : m.keys()) o.filter_by_min_points[k] = m.get<int>(k);
  }
  const config::Config groups = db.node("sample_groups");
  for (const std::string& k : groups.keys()) o.sample_groups[k] = groups.get<int>(k);
  if (t.get<bool>("use_ground_plane")) {
    log::warning(t.origin("use_ground_plane") + ": " + t.path() +
                 ".use_ground_plane is ignored (no road planes): pasted objects keep the height "
                 "they were recorded at");
  }
  std::shared_ptr<const ObjectSampler> sampler;
  try {
    sampler = std::make_shared<const ObjectSampler>(
        o, dataset.get<std::vector<std::string>>("metainfo.classes"), use_dim);
  } catch (const config::ConfigError&) {
    throw;
  } catch (const std::runtime_error& e) {
    throw config::ConfigError(
        db.origin("info_path"), db.path() + ".info_path",
        std::string(e.what()) + " (write the database with `ddp3d data create-gt-db DATA_ROOT`)");
  }
  return [sampler](data::DetectionSample& s, std::mt19937_64& rng) { sampler->apply(s, rng); };
}

}  // namespace

DetectionPipeline DetectionPipeline::from_config(const config::Config& dataset) {
  DetectionPipeline p;
  if (!dataset.has("pipeline")) return p;
  for (const config::Config& t : dataset.list("pipeline")) {
    const std::string type = t.get<std::string>("type");
    const std::string key = t.path() + ".type";
    Step step;
    if (type == "LoadPointsFromFile") {
      const auto load_dim = t.get<std::int64_t>("load_dim");
      p.use_dim_ = t.get<std::int64_t>("use_dim");
      if (load_dim != 4) {
        throw config::ConfigError(t.origin("load_dim"), t.path() + ".load_dim",
                                  "KITTI velodyne files hold 4 floats per point (x, y, z, r)");
      }
      if (p.use_dim_ < 3 || p.use_dim_ > load_dim) {
        throw config::ConfigError(
            t.origin("use_dim"), t.path() + ".use_dim",
            "must be between 3 and load_dim (" + std::to_string(load_dim) + ")");
      }
    } else if (type == "LoadAnnotations3D") {
      p.with_annotations_ = true;
    } else if (type == "Pack3DDetInputs") {
      // The dataset always packs points, and the boxes when annotations are loaded.
    } else if (type == "RandomFlip3D") {
      const double h = t.get<double>("flip_ratio_bev_horizontal");
      const double v = t.get<double>("flip_ratio_bev_vertical");
      step = [h, v](data::DetectionSample& s, std::mt19937_64& rng) {
        data::random_flip_bev(s, h, rng);
        if (std::uniform_real_distribution<double>(0, 1)(rng) < v) flip_bev_vertical(s);
      };
    } else if (type == "GlobalRotScaleTrans") {
      const auto rot = pair(t, "rot_range");
      const auto scale = pair(t, "scale_ratio_range");
      const auto std3 = t.get<std::vector<double>>("translation_std");
      if (std3.size() != 3 || std3[0] != std3[1] || std3[1] != std3[2]) {
        throw config::ConfigError(t.origin("translation_std"), t.path() + ".translation_std",
                                  "must be three equal numbers (one std for x, y and z)");
      }
      const double tstd = std3[0];
      step = [rot, scale, tstd](data::DetectionSample& s, std::mt19937_64& rng) {
        data::global_rot_scale_trans(s, rot, scale, tstd, rng);
      };
    } else if (type == "PointsRangeFilter") {
      const auto r = range6(t, "point_cloud_range");
      step = [r](data::DetectionSample& s, std::mt19937_64&) { data::points_range_filter(s, r); };
    } else if (type == "ObjectRangeFilter") {
      const auto r = range6(t, "point_cloud_range");
      step = [r](data::DetectionSample& s, std::mt19937_64&) { data::object_range_filter(s, r); };
    } else if (type == "ObjectNameFilter") {
      // Boxes of other classes are never loaded (labels index the dataset's classes).
      step = [](data::DetectionSample& s, std::mt19937_64&) { data::object_name_filter(s); };
    } else if (type == "PointShuffle") {
      step = [](data::DetectionSample& s, std::mt19937_64& rng) { data::point_shuffle(s, rng); };
    } else if (type == "ObjectSample") {
      step = object_sample_step(t, dataset, p.use_dim_);
    } else if (type == "ObjectNoise") {
      ObjectNoiseOptions o;
      o.num_try = t.get<int>("num_try");
      const auto std3 = t.get<std::vector<double>>("translation_std");
      if (std3.size() != 3) {
        throw config::ConfigError(t.origin("translation_std"), t.path() + ".translation_std",
                                  "expected 3 numbers");
      }
      o.translation_std = {std3[0], std3[1], std3[2]};
      if (t.has("rot_range")) o.rot_range = pair(t, "rot_range");
      if (t.has("global_rot_range")) {
        const auto g = pair(t, "global_rot_range");
        if (g[0] != 0 || g[1] != 0) {
          throw config::ConfigError(t.origin("global_rot_range"), t.path() + ".global_rot_range",
                                    "only [0, 0] is supported (use GlobalRotScaleTrans)");
        }
      }
      step = [o](data::DetectionSample& s, std::mt19937_64& rng) { object_noise(s, o, rng); };
    } else {
      throw config::ConfigError(t.origin("type"), key, "unknown transform '" + type + "'");
    }
    p.names_.push_back(type);
    if (step) {
      p.steps_.push_back(std::move(step));
      p.step_types_.push_back(type);
    }
  }
  return p;
}

DetectionPipeline DetectionPipeline::without(const std::set<std::string>& types) const {
  DetectionPipeline p = *this;
  p.names_.clear();
  p.steps_.clear();
  p.step_types_.clear();
  for (const std::string& name : names_) {
    if (!types.contains(name)) p.names_.push_back(name);
  }
  for (std::size_t i = 0; i < steps_.size(); ++i) {
    if (types.contains(step_types_[i])) continue;
    p.steps_.push_back(steps_[i]);
    p.step_types_.push_back(step_types_[i]);
  }
  return p;
}

void DetectionPipeline::apply(data::DetectionSample& sample, std::mt19937_64& rng) const {
  for (const Step& step : steps_) step(sample, rng);
}

}  // namespace ddp3d::detection
