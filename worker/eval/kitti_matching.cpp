#include "worker/eval/kitti_matching.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "worker/eval/box_overlap.h"

namespace ddp3d::eval {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// Classes the devkit treats as "don't penalise either way" for the evaluated class.
bool is_neighbour_class(const std::string& evaluated, const std::string& other) {
  return (evaluated == "car" && other == "van") ||
         (evaluated == "pedestrian" && other == "person_sitting");
}

CameraBox3d camera_box(const EvalObject& o) {
  // KITTI dimensions are (height, width, length).
  return CameraBox3d{
      GroundRect{o.location[0], o.location[2], o.dimensions[2], o.dimensions[1], o.rotation_y},
      o.location[1], o.dimensions[0]};
}

}  // namespace

FrameRoles classify_frame(const EvalFrame& frame, const std::string& class_name,
                          Difficulty difficulty) {
  const auto d = static_cast<std::size_t>(difficulty);
  const std::string cls = lower(class_name);
  FrameRoles roles;
  roles.ground_truth.reserve(frame.ground_truth.size());
  for (const EvalObject& gt : frame.ground_truth) {
    const std::string name = lower(gt.type);
    const int valid_class = name == cls ? 1 : is_neighbour_class(cls, name) ? 0 : -1;
    const double height = gt.bbox[3] - gt.bbox[1];
    const bool too_hard = gt.occluded > kMaxOcclusion[d] || gt.truncated > kMaxTruncation[d] ||
                          height <= kMinHeight[d];
    if (valid_class == 1 && !too_hard) {
      roles.ground_truth.push_back(0);
      ++roles.num_valid_gt;
    } else if (valid_class == 0 || valid_class == 1) {
      roles.ground_truth.push_back(1);
    } else {
      roles.ground_truth.push_back(-1);
    }
    if (gt.type == "DontCare") roles.dontcare.push_back(gt.bbox);
  }
  roles.detections.reserve(frame.detections.size());
  for (const EvalObject& det : frame.detections) {
    // The devkit checks the height before the class: a small detection of any class is
    // "ignored" (1), not "other class" (-1). Both keep it out of TP and FP alike.
    const double height = std::abs(det.bbox[3] - det.bbox[1]);
    if (height < kMinHeight[d]) {
      roles.detections.push_back(1);
    } else {
      roles.detections.push_back(lower(det.type) == cls ? 0 : -1);
    }
  }
  return roles;
}

OverlapMatrix frame_overlaps(const EvalFrame& frame, Metric metric) {
  OverlapMatrix out(frame.detections.size(), std::vector<double>(frame.ground_truth.size(), 0));
  for (std::size_t d = 0; d < frame.detections.size(); ++d) {
    const EvalObject& det = frame.detections[d];
    for (std::size_t g = 0; g < frame.ground_truth.size(); ++g) {
      const EvalObject& gt = frame.ground_truth[g];
      switch (metric) {
        case Metric::kBbox:
          out[d][g] = image_box_overlap(det.bbox, gt.bbox);
          break;
        case Metric::kBev:
          out[d][g] = bev_iou(camera_box(det).ground, camera_box(gt).ground);
          break;
        case Metric::k3d:
          out[d][g] = box3d_iou(camera_box(det), camera_box(gt));
          break;
      }
    }
  }
  return out;
}

FrameStatistics frame_statistics(const OverlapMatrix& overlaps, const EvalFrame& frame,
                                 const FrameRoles& roles, Metric metric, double min_overlap,
                                 double score_threshold, bool count_false_positives,
                                 bool compute_aos) {
  const auto& dets = frame.detections;
  const auto& gts = frame.ground_truth;
  const std::size_t n_det = dets.size();
  std::vector<bool> assigned(n_det, false);
  std::vector<bool> below_threshold(n_det, false);
  if (count_false_positives) {
    for (std::size_t j = 0; j < n_det; ++j) below_threshold[j] = dets[j].score < score_threshold;
  }
  constexpr double kNoDetection = -10000000;
  FrameStatistics stats;
  std::vector<double> alpha_deltas;

  for (std::size_t i = 0; i < gts.size(); ++i) {
    if (roles.ground_truth[i] == -1) continue;
    long det_idx = -1;
    double valid_detection = kNoDetection;
    double max_overlap = 0;
    bool assigned_ignored_det = false;
    for (std::size_t j = 0; j < n_det; ++j) {
      if (roles.detections[j] == -1 || assigned[j] || below_threshold[j]) continue;
      const double overlap = overlaps[j][i];
      if (!(overlap > min_overlap)) continue;
      if (!count_false_positives) {
        // Pass 1: the highest-scoring overlapping detection.
        if (dets[j].score > valid_detection) {
          det_idx = static_cast<long>(j);
          valid_detection = dets[j].score;
        }
      } else if ((overlap > max_overlap || assigned_ignored_det) && roles.detections[j] == 0) {
        // Pass 2: the best-overlapping counted detection beats any ignored one.
        max_overlap = overlap;
        det_idx = static_cast<long>(j);
        valid_detection = 1;
        assigned_ignored_det = false;
      } else if (valid_detection == kNoDetection && roles.detections[j] == 1) {
        det_idx = static_cast<long>(j);
        valid_detection = 1;
        assigned_ignored_det = true;
      }
    }
    if (valid_detection == kNoDetection) {
      if (roles.ground_truth[i] == 0) ++stats.fn;
    } else if (roles.ground_truth[i] == 1 || roles.detections[det_idx] == 1) {
      assigned[det_idx] = true;  // matched to something ignored: neither TP nor FP
    } else {
      ++stats.tp;
      stats.tp_scores.push_back(dets[det_idx].score);
      if (compute_aos) alpha_deltas.push_back(gts[i].alpha - dets[det_idx].alpha);
      assigned[det_idx] = true;
    }
  }

  if (count_false_positives) {
    for (std::size_t j = 0; j < n_det; ++j) {
      if (!assigned[j] && roles.detections[j] == 0 && !below_threshold[j]) ++stats.fp;
    }
    if (metric == Metric::kBbox) {
      int forgiven = 0;
      for (const auto& dc : roles.dontcare) {
        for (std::size_t j = 0; j < n_det; ++j) {
          if (assigned[j] || roles.detections[j] != 0 || below_threshold[j]) continue;
          if (image_box_overlap(dets[j].bbox, dc, OverlapNorm::kFirst) > min_overlap) {
            assigned[j] = true;
            ++forgiven;
          }
        }
      }
      stats.fp -= forgiven;
    }
    if (compute_aos) {
      if (stats.tp > 0 || stats.fp > 0) {
        stats.similarity = 0;
        for (double delta : alpha_deltas) stats.similarity += (1.0 + std::cos(delta)) / 2.0;
      } else {
        stats.similarity = -1;
      }
    }
  }
  return stats;
}

std::vector<double> recall_thresholds(std::vector<double> scores, int num_valid_gt) {
  std::sort(scores.begin(), scores.end(), std::greater<>());
  std::vector<double> thresholds;
  double current_recall = 0;
  const double n = num_valid_gt;
  for (std::size_t i = 0; i < scores.size(); ++i) {
    const bool last = i + 1 == scores.size();
    const double l_recall = static_cast<double>(i + 1) / n;
    const double r_recall = last ? l_recall : static_cast<double>(i + 2) / n;
    // Keep a score only when its recall is the closest one to the next sample position.
    if (!last && (r_recall - current_recall) < (current_recall - l_recall)) continue;
    thresholds.push_back(scores[i]);
    current_recall += 1.0 / (kNumSamplePoints - 1.0);
  }
  return thresholds;
}

double ap11(const std::array<double, kNumSamplePoints>& precision) {
  double sum = 0;
  for (int i = 0; i < kNumSamplePoints; i += 4) sum += precision[i];
  return sum / 11 * 100;
}

double ap40(const std::array<double, kNumSamplePoints>& precision) {
  double sum = 0;
  for (int i = 1; i < kNumSamplePoints; ++i) sum += precision[i];
  return sum / 40 * 100;
}

}  // namespace ddp3d::eval
