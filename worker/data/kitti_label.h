// KITTI object labels (label_2/XXXXXX.txt): one object per line,
//   type truncated occluded alpha left top right bottom h w l x y z rotation_y [score]
// with the box in the rectified camera frame (location = bottom centre, y pointing down).
#pragma once

#include <array>
#include <string>
#include <vector>

namespace ddp3d::data {

struct KittiObject {
  std::string type;  // Car, Pedestrian, Cyclist, Van, ..., DontCare
  double truncated = 0.0;
  int occluded = 0;  // 0 fully visible, 1 partly, 2 largely occluded, 3 unknown
  double alpha = 0.0;
  std::array<double, 4> bbox{};        // left, top, right, bottom in pixels
  std::array<double, 3> dimensions{};  // height, width, length in metres
  std::array<double, 3> location{};    // x, y, z in the rectified camera frame
  double rotation_y = 0.0;
  double score = 1.0;  // only in result files
  bool has_score = false;
};

// Parses label text; errors name `path` and the line: "label_2/000003.txt:2: expected 15 or 16
// fields, got 9".
std::vector<KittiObject> parse_kitti_labels(const std::string& text, const std::string& path);
std::vector<KittiObject> read_kitti_labels(const std::string& path);
// How a label line is written: kLabel as the devkit's label_2 files (two decimals, truncated
// and occluded as given), kResult as the KITTI server's result files (truncated and occluded
// -1, four decimals, what mmdet3d's format_only writes).
enum class KittiLabelStyle { kLabel, kResult };
// One line per object; scores are written when has_score is set.
std::string format_kitti_labels(const std::vector<KittiObject>& objects,
                                KittiLabelStyle style = KittiLabelStyle::kLabel);

}  // namespace ddp3d::data
