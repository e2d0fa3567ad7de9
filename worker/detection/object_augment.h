// Object-level augmentations of the training pipeline (mmdet3d's names):
//  - ObjectSample: pastes objects from the GT database (worker/data/gt_database.h) into the
//    scene, up to `sample_groups` objects per class, skipping any whose BEV footprint would
//    touch a box already there; scene points inside pasted boxes are removed first.
//  - ObjectNoise: moves and turns each box (and the points inside it) by a random amount,
//    keeping the first of `num_try` draws that collides with no other box.
#pragma once

#include <array>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "worker/data/gt_database.h"
#include "worker/data/transforms.h"

namespace ddp3d::detection {

struct ObjectSampleOptions {
  std::string data_root;                  // the database's .bin paths are relative to it
  std::string info_path;                  // the index (ddp3d data create-gt-db)
  std::vector<int> filter_by_difficulty;  // entries with these difficulties are dropped
  std::map<std::string, int> filter_by_min_points;
  std::map<std::string, int> sample_groups;  // class -> objects wanted per scene
};

class ObjectSampler {
 public:
  // `class_names`: the dataset's classes (label order). Reads the index; errors name it.
  ObjectSampler(const ObjectSampleOptions& options, const std::vector<std::string>& class_names,
                std::int64_t use_dim);

  void apply(data::DetectionSample& s, std::mt19937_64& rng) const;

  // Entries left per label after filtering.
  std::size_t pool_size(std::int64_t label) const;

 private:
  std::string root_;
  std::int64_t use_dim_;
  std::map<std::int64_t, std::vector<data::GtDatabaseEntry>> pool_;
  std::vector<std::pair<std::int64_t, int>> groups_;  // label, objects wanted
};

struct ObjectNoiseOptions {
  int num_try = 100;
  std::array<double, 3> translation_std{0.25, 0.25, 0.25};
  std::array<double, 2> rot_range{-0.15707963267948966, 0.15707963267948966};
};

void object_noise(data::DetectionSample& s, const ObjectNoiseOptions& options,
                  std::mt19937_64& rng);

}  // namespace ddp3d::detection
