// KITTI object detection AP over a set of frames, faithful to the official devkit as
// mmdet3d's kitti_eval implements it: 2D bbox, BEV and 3D AP (AP11 and AP40) and AOS for
// easy / moderate / hard, at the strict (Car 0.7, Pedestrian / Cyclist 0.5) and loose
// (BEV / 3D: 0.5 / 0.25) overlap settings. See docs/evaluation.md.
#pragma once

#include <array>
#include <map>
#include <string>
#include <vector>

#include "worker/eval/kitti_eval_frames.h"
#include "worker/eval/kitti_matching.h"

namespace ddp3d::eval {

struct KittiEvalOptions {
  // Evaluated classes; each must be one of Car, Pedestrian, Cyclist, Van, Person_sitting.
  std::vector<std::string> classes{"Car", "Pedestrian", "Cyclist"};
  bool bbox = true;  // 2D image boxes (needs meaningful bbox: projection through calib)
  bool bev = true;
  bool box3d = true;
  // AOS is computed (with the 2D metric) when this is on and both some detection and some
  // ground-truth object carry an alpha other than -10, as the devkit decides.
  bool aos = true;
  bool loose = true;  // also the devkit's second, looser overlap setting
};

// Indices of the AP tables.
enum class OverlapSetting { kStrict = 0, kLoose = 1 };
inline constexpr int kNumMetricsWithAos = 4;  // bbox, bev, 3d, aos
inline constexpr int kAosIndex = 3;

struct ClassAp {
  std::string name;
  // min_overlap[setting][metric (bbox, bev, 3d)]
  std::array<std::array<double, 3>, 2> min_overlap{};
  // ap[setting][metric (bbox, bev, 3d, aos)][difficulty], in percent; NaN where not computed.
  using Table = std::array<std::array<std::array<double, 3>, kNumMetricsWithAos>, 2>;
  Table ap11{};
  Table ap40{};
};

struct KittiEvalResult {
  std::vector<ClassAp> classes;
  bool has_bbox = false;
  bool has_bev = false;
  bool has_3d = false;
  bool has_aos = false;
  bool has_loose = false;
  std::size_t num_frames = 0;

  // The AP of one class; throws std::out_of_range naming the class if it was not evaluated.
  const ClassAp& at(const std::string& class_name) const;

  // mmdet3d-style printout ("----------- AP11 Results ------------", "Car AP11@0.70, ...").
  std::string table() const;

  // Flat metric names → values (percent), mmdet3d's names:
  // KITTI/<Class>_<2D|BEV|3D|AOS>_<AP11|AP40>_<easy|moderate|hard>_<strict|loose>, plus
  // KITTI/Overall_<2D|BEV|3D|AOS>_<AP11|AP40>_<difficulty> (strict, mean over classes) when
  // more than one class is evaluated.
  std::map<std::string, double> metrics() const;

  // metrics() as one JSON object (keys sorted, values with 17 significant digits).
  std::string metrics_json() const;
};

// Overlap thresholds [setting][metric] the devkit uses for `class_name`.
// Throws std::invalid_argument for an unknown class.
std::array<std::array<double, 3>, 2> kitti_min_overlaps(const std::string& class_name);

KittiEvalResult evaluate_kitti(const KittiEvalFrames& frames, const KittiEvalOptions& options = {});

}  // namespace ddp3d::eval
