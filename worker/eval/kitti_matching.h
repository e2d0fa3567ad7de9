// The KITTI devkit's per-frame matching and precision/recall machinery (as mmdet3d's
// kitti_eval implements it): which objects are ignored for a class and difficulty, greedy
// matching of detections to ground truth, the score thresholds sampled at 41 recall
// positions, and AP11 / AP40 from the resulting precision curve.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "worker/eval/kitti_eval_frames.h"

namespace ddp3d::eval {

enum class Difficulty { kEasy = 0, kModerate = 1, kHard = 2 };
enum class Metric { kBbox = 0, kBev = 1, k3d = 2 };

// Devkit difficulty limits, indexed by Difficulty.
inline constexpr std::array<double, 3> kMinHeight{40, 25, 25};  // px, 2D box height
inline constexpr std::array<int, 3> kMaxOcclusion{0, 1, 2};
inline constexpr std::array<double, 3> kMaxTruncation{0.15, 0.3, 0.5};
inline constexpr int kNumSamplePoints = 41;

// Role of each object for one (class, difficulty): 0 counts, 1 is ignored (neither TP nor
// FP: a neighbouring class such as Van for Car, or too hard / too small), -1 is another
// class and takes no part.
struct FrameRoles {
  std::vector<int> ground_truth;
  std::vector<int> detections;
  std::vector<std::array<double, 4>> dontcare;  // 2D boxes of DontCare regions
  int num_valid_gt = 0;
};

FrameRoles classify_frame(const EvalFrame& frame, const std::string& class_name,
                          Difficulty difficulty);

// overlaps[d][g]: overlap of detection d with ground-truth object g under `metric`.
using OverlapMatrix = std::vector<std::vector<double>>;
OverlapMatrix frame_overlaps(const EvalFrame& frame, Metric metric);

struct FrameStatistics {
  int tp = 0;
  int fp = 0;
  int fn = 0;
  double similarity = -1;         // sum of (1 + cos Δalpha) / 2 over TPs; -1 if no TP/FP
  std::vector<double> tp_scores;  // scores of the true positives
};

// The devkit's compute_statistics. Without `count_false_positives` every valid ground-truth
// object takes the highest-scoring overlapping detection (pass 1: collect TP scores); with it,
// detections scoring below `score_threshold` are dropped, each ground-truth object takes its
// best-overlapping detection, false positives are counted, and (for the 2D metric only)
// unmatched detections inside DontCare regions are forgiven.
FrameStatistics frame_statistics(const OverlapMatrix& overlaps, const EvalFrame& frame,
                                 const FrameRoles& roles, Metric metric, double min_overlap,
                                 double score_threshold, bool count_false_positives,
                                 bool compute_aos);

// Score thresholds at (up to) 41 evenly spaced recall positions, from the TP scores.
std::vector<double> recall_thresholds(std::vector<double> tp_scores, int num_valid_gt);

// AP over the 41-point precision curve: AP11 samples points 0, 4, ..., 40, AP40 points
// 1..40. In percent, as the devkit prints.
double ap11(const std::array<double, kNumSamplePoints>& precision);
double ap40(const std::array<double, kNumSamplePoints>& precision);

}  // namespace ddp3d::eval
