// The ground-truth database GT sampling (mmdet3d's ObjectSample) pastes objects from: the
// points inside every labelled box of a training split, one .bin per object (float32 x, y, z,
// r relative to the box's bottom centre), listed in a tab-separated index.
//   ddp3d data create-gt-db DATA_ROOT  ->  DATA_ROOT/kitti_gt_database/*.bin
//                                          DATA_ROOT/kitti_dbinfos_train.tsv
// (mmdet3d keeps the index as a pickle; ddp3d reads only its own text form.)
#pragma once

#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

#include "worker/data/kitti_dataset.h"
#include "worker/data/lidar_box.h"

namespace ddp3d::data {

struct GtDatabaseEntry {
  std::string type;  // Car, Pedestrian, ...
  std::string path;  // the .bin, relative to the index's folder
  LidarBox box;      // where the object was (LiDAR frame)
  int num_points = 0;
  int difficulty = -1;  // KITTI's 0 easy, 1 moderate, 2 hard; -1 none of them
};

// [N] bool: which points [N, >=3] lie inside `box` (bottom-centre LiDAR box).
at::Tensor points_in_box(const at::Tensor& points, const LidarBox& box);

// KITTI difficulty of a label from its 2D box height, occlusion and truncation.
int kitti_difficulty(const KittiObject& object);

// Writes the database of `split` for `classes` under `root`; returns the entries written.
std::vector<GtDatabaseEntry> create_gt_database(const std::string& root, const std::string& split,
                                                const std::vector<std::string>& classes);

// Reads an index; errors name the file and line.
std::vector<GtDatabaseEntry> read_gt_database(const std::string& index_path);
std::string format_gt_database(const std::vector<GtDatabaseEntry>& entries);

}  // namespace ddp3d::data
