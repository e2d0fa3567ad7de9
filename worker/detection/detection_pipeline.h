// The data pipeline of a detection dataset, built from the config's `pipeline` list
// (mmdet3d's transform names). Loading and packing are done by the dataset itself, so here
// they only check their options; the rest become steps on a data::DetectionSample.
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "worker/config/config.h"
#include "worker/data/transforms.h"

namespace ddp3d::detection {

class DetectionPipeline {
 public:
  using Step = std::function<void(data::DetectionSample&, std::mt19937_64&)>;

  DetectionPipeline() = default;
  // `dataset` is the config view of the dataset (the mapping with `pipeline`). An unknown
  // transform, bad options or a missing GT database throw config::ConfigError naming the key.
  static DetectionPipeline from_config(const config::Config& dataset);

  // Point features kept from the file (LoadPointsFromFile.use_dim); 4 when not given.
  std::int64_t use_dim() const { return use_dim_; }
  // LoadAnnotations3D present: the sample carries gt_bboxes_3d / gt_labels_3d.
  bool with_annotations() const { return with_annotations_; }
  const std::vector<std::string>& step_names() const { return names_; }
  // The same pipeline without the steps of the transform types named (e.g. the random
  // augmentations, for pictures of the data as it is on disk).
  DetectionPipeline without(const std::set<std::string>& types) const;

  void apply(data::DetectionSample& sample, std::mt19937_64& rng) const;

 private:
  std::int64_t use_dim_ = 4;
  bool with_annotations_ = false;
  std::vector<std::string> names_;
  std::vector<Step> steps_;
  std::vector<std::string> step_types_;  // the transform type of each step
};

}  // namespace ddp3d::detection
