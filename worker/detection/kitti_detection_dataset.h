// KITTI-layout detection data behind the engine's Dataset interface: "KittiDataset" reads a
// dataset as it is; "SyntheticKitti" first writes one with the synthetic-scene generator when
// data_root has none. Each sample runs the config's pipeline and carries, for training, the
// fields the detector reads and, for evaluation, the frame's full label set and calibration:
//   points [N, C] float                       (always)
//   gt_bboxes_3d [K, 7], gt_labels_3d [K]     (with LoadAnnotations3D)
//   eval_gt [G, 15] double, calib [36] double (always; see kitti_eval_record.h)
#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "worker/config/config.h"
#include "worker/data/kitti_dataset.h"
#include "worker/data/synthetic_kitti.h"
#include "worker/detection/detection_pipeline.h"
#include "worker/engine/dataset.h"

namespace ddp3d::detection {

class KittiDetectionDataset : public engine::Dataset {
 public:
  KittiDetectionDataset(data::KittiDataset frames, DetectionPipeline pipeline, bool test_mode);

  std::int64_t size() const override { return static_cast<std::int64_t>(frames_.size()); }
  engine::Sample get(std::int64_t index, at::Generator& rng) const override;
  std::set<std::string> list_fields() const override;

  const data::KittiDataset& frames() const { return frames_; }
  const DetectionPipeline& pipeline() const { return pipeline_; }

 private:
  data::KittiDataset frames_;
  DetectionPipeline pipeline_;
  bool test_mode_;
  std::string class_list_;  // the class names, comma-separated: every sample's meta "classes"
};

// Builds a "KittiDataset" from its config view (data_root, split, metainfo.classes, pipeline,
// test_mode). Errors name the key and file, or the missing path.
std::shared_ptr<engine::Dataset> make_kitti_dataset(const config::Config& cfg);

// Builds a "SyntheticKitti": like make_kitti_dataset, after making sure data_root holds the
// synthetic dataset of `num_scenes` scenes from `seed` (written atomically if absent, so
// ranks that start together do not see a half-written one).
std::shared_ptr<engine::Dataset> make_synthetic_kitti_dataset(const config::Config& cfg);

// Writes the synthetic dataset to `root` unless it is already there; throws if `root` holds a
// synthetic dataset made with other options (naming them).
void ensure_synthetic_kitti(const std::string& root, const data::SynthKittiOptions& options);

}  // namespace ddp3d::detection
