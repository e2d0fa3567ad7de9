#include "worker/data/kitti_dataset.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cctype>
#include <sstream>
#include <stdexcept>

#include "worker/data/lidar_box.h"
#include "worker/data/point_cloud_file.h"
#include "worker/data/text_file.h"

namespace ddp3d::data {

KittiDataset::KittiDataset(std::string root, const std::string& split,
                           std::vector<std::string> class_names)
    : root_(std::move(root)), class_names_(std::move(class_names)) {
  const std::string list = root_ + "/ImageSets/" + split + ".txt";
  std::istringstream in(read_file(list, kMaxSplitListBytes, "KITTI split list"));
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    std::istringstream tokens(line);
    for (std::string id; tokens >> id;) {
      // Frame ids become file names: "000042", never "../x" or a 10 MB token.
      const bool plain =
          id.size() <= 64 && std::all_of(id.begin(), id.end(), [](char c) {
            return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
          });
      if (!plain) {
        throw std::runtime_error(list + ":" + std::to_string(line_no) + ": '" + id.substr(0, 64) +
                                 "' is not a frame id (letters, digits, '_' or '-', at most 64)");
      }
      ids_.push_back(id);
    }
  }
  if (ids_.empty()) throw std::runtime_error(list + ": the split lists no frames");
}

KittiFrame KittiDataset::load(std::size_t index) const {
  if (index >= ids_.size()) throw std::out_of_range("frame index out of range");
  KittiFrame f;
  f.id = ids_[index];
  const std::string base = root_ + "/training/";
  f.points = read_velodyne(base + "velodyne/" + f.id + ".bin");
  f.calib = read_kitti_calib(base + "calib/" + f.id + ".txt");
  f.objects = read_kitti_labels(base + "label_2/" + f.id + ".txt");
  std::vector<float> boxes;
  std::vector<std::int64_t> labels;
  for (const auto& o : f.objects) {
    const auto it = std::find(class_names_.begin(), class_names_.end(), o.type);
    if (it == class_names_.end()) continue;
    const LidarBox b = lidar_box_from_kitti(o, f.calib);
    for (double v : {b.x, b.y, b.z, b.l, b.w, b.h, b.yaw}) boxes.push_back(static_cast<float>(v));
    labels.push_back(it - class_names_.begin());
  }
  const auto k = static_cast<std::int64_t>(labels.size());
  f.gt_boxes = at::from_blob(boxes.data(), {k, 7}, at::kFloat).clone();
  f.gt_labels = at::from_blob(labels.data(), {k}, at::kLong).clone();
  return f;
}

}  // namespace ddp3d::data
