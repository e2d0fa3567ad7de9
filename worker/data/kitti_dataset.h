// Reads a KITTI-layout object dataset: ImageSets/<split>.txt lists the frames; each frame has
// training/velodyne/<id>.bin, training/label_2/<id>.txt and training/calib/<id>.txt.
#pragma once

#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

#include "worker/data/kitti_calib.h"
#include "worker/data/kitti_label.h"

namespace ddp3d::data {

struct KittiFrame {
  std::string id;
  at::Tensor points;                 // [N, 4] float32, lidar frame
  std::vector<KittiObject> objects;  // every label line (DontCare, Van, ... included, for eval)
  KittiCalib calib;
  at::Tensor gt_boxes;   // [K, 7] float32 lidar boxes of the objects whose type is a class
  at::Tensor gt_labels;  // [K] int64 index into class_names
};

class KittiDataset {
 public:
  // Throws naming the missing file when the split list cannot be read.
  KittiDataset(std::string root, const std::string& split, std::vector<std::string> class_names);

  std::size_t size() const { return ids_.size(); }
  const std::vector<std::string>& ids() const { return ids_; }
  const std::vector<std::string>& class_names() const { return class_names_; }
  // Reads frame `index`; errors name the file (and line, for text files).
  KittiFrame load(std::size_t index) const;

 private:
  std::string root_;
  std::vector<std::string> class_names_;
  std::vector<std::string> ids_;
};

}  // namespace ddp3d::data
