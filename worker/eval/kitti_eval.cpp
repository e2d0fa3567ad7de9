#include "worker/eval/kitti_eval.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace ddp3d::eval {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct PrCurve {
  std::array<double, kNumSamplePoints> precision{};
  std::array<double, kNumSamplePoints> orientation{};
};

// The frames in order, with their overlap matrices per metric computed once.
struct PreparedFrames {
  std::vector<const EvalFrame*> frames;
  std::array<std::vector<OverlapMatrix>, 3> overlaps;  // [metric][frame]
};

PrCurve precision_curve(const PreparedFrames& prepared, const std::vector<FrameRoles>& roles,
                        int num_valid_gt, Metric metric, double min_overlap, bool compute_aos) {
  const auto m = static_cast<std::size_t>(metric);
  const std::size_t n = prepared.frames.size();
  std::vector<double> tp_scores;
  for (std::size_t f = 0; f < n; ++f) {
    auto stats = frame_statistics(prepared.overlaps[m][f], *prepared.frames[f], roles[f], metric,
                                  min_overlap, 0.0, false, false);
    tp_scores.insert(tp_scores.end(), stats.tp_scores.begin(), stats.tp_scores.end());
  }
  std::vector<double> thresholds = recall_thresholds(std::move(tp_scores), num_valid_gt);
  if (thresholds.size() > kNumSamplePoints) thresholds.resize(kNumSamplePoints);

  struct Counts {
    double tp = 0, fp = 0, similarity = 0;
  };
  std::vector<Counts> counts(thresholds.size());
  for (std::size_t f = 0; f < n; ++f) {
    for (std::size_t t = 0; t < thresholds.size(); ++t) {
      auto stats = frame_statistics(prepared.overlaps[m][f], *prepared.frames[f], roles[f], metric,
                                    min_overlap, thresholds[t], true, compute_aos);
      counts[t].tp += stats.tp;
      counts[t].fp += stats.fp;
      if (stats.similarity != -1) counts[t].similarity += stats.similarity;
    }
  }
  PrCurve curve;
  for (std::size_t t = 0; t < thresholds.size(); ++t) {
    const double denom = counts[t].tp + counts[t].fp;
    curve.precision[t] = denom > 0 ? counts[t].tp / denom : 0;
    curve.orientation[t] = denom > 0 ? counts[t].similarity / denom : 0;
  }
  // Interpolate: precision at a recall position is the best precision at any higher recall.
  for (int t = kNumSamplePoints - 2; t >= 0; --t) {
    curve.precision[t] = std::max(curve.precision[t], curve.precision[t + 1]);
    curve.orientation[t] = std::max(curve.orientation[t], curve.orientation[t + 1]);
  }
  return curve;
}

bool any_alpha(const KittiEvalFrames& frames, bool detections) {
  for (const auto& [id, frame] : frames.frames()) {
    for (const EvalObject& o : detections ? frame.detections : frame.ground_truth) {
      if (o.alpha != -10) return true;
    }
  }
  return false;
}

}  // namespace

std::array<std::array<double, 3>, 2> kitti_min_overlaps(const std::string& class_name) {
  // [setting][bbox, bev, 3d], as the devkit / mmdet3d's overlap_0_7 and overlap_0_5.
  if (class_name == "Car" || class_name == "Van") {
    return {{{0.7, 0.7, 0.7}, {0.7, 0.5, 0.5}}};
  }
  if (class_name == "Pedestrian" || class_name == "Cyclist" || class_name == "Person_sitting") {
    return {{{0.5, 0.5, 0.5}, {0.5, 0.25, 0.25}}};
  }
  throw std::invalid_argument("kitti eval: unknown class '" + class_name +
                              "' (expected Car, Pedestrian, Cyclist, Van or Person_sitting)");
}

const ClassAp& KittiEvalResult::at(const std::string& class_name) const {
  for (const ClassAp& c : classes) {
    if (c.name == class_name) return c;
  }
  throw std::out_of_range("kitti eval: class '" + class_name + "' was not evaluated");
}

KittiEvalResult evaluate_kitti(const KittiEvalFrames& frames, const KittiEvalOptions& options) {
  KittiEvalResult result;
  result.num_frames = frames.size();
  result.has_bbox = options.bbox;
  result.has_bev = options.bev;
  result.has_3d = options.box3d;
  result.has_loose = options.loose;
  result.has_aos =
      options.bbox && options.aos && any_alpha(frames, true) && any_alpha(frames, false);
  const std::array<bool, 3> enabled{options.bbox, options.bev, options.box3d};

  PreparedFrames prepared;
  for (const auto& [id, frame] : frames.frames()) prepared.frames.push_back(&frame);
  for (int m = 0; m < 3; ++m) {
    if (!enabled[m]) continue;
    for (const EvalFrame* frame : prepared.frames) {
      prepared.overlaps[m].push_back(frame_overlaps(*frame, static_cast<Metric>(m)));
    }
  }

  const int num_settings = options.loose ? 2 : 1;
  for (std::size_t i = 0; i < options.classes.size(); ++i) {
    if (std::find(options.classes.begin(), options.classes.begin() + i, options.classes[i]) !=
        options.classes.begin() + i) {
      throw std::invalid_argument("kitti eval: class '" + options.classes[i] +
                                  "' is listed twice in the options");
    }
  }
  for (const std::string& class_name : options.classes) {
    ClassAp cls;
    cls.name = class_name;
    cls.min_overlap = kitti_min_overlaps(class_name);
    for (auto* table : {&cls.ap11, &cls.ap40}) {
      for (auto& setting : *table) {
        for (auto& metric : setting) metric.fill(kNaN);
      }
    }
    for (int d = 0; d < 3; ++d) {
      std::vector<FrameRoles> roles;
      int num_valid_gt = 0;
      for (const EvalFrame* frame : prepared.frames) {
        roles.push_back(classify_frame(*frame, class_name, static_cast<Difficulty>(d)));
        num_valid_gt += roles.back().num_valid_gt;
      }
      for (int s = 0; s < num_settings; ++s) {
        for (int m = 0; m < 3; ++m) {
          if (!enabled[m]) continue;
          const bool with_aos = m == 0 && result.has_aos;
          const PrCurve curve =
              precision_curve(prepared, roles, num_valid_gt, static_cast<Metric>(m),
                              cls.min_overlap[s][m], with_aos);
          cls.ap11[s][m][d] = ap11(curve.precision);
          cls.ap40[s][m][d] = ap40(curve.precision);
          if (with_aos) {
            cls.ap11[s][kAosIndex][d] = ap11(curve.orientation);
            cls.ap40[s][kAosIndex][d] = ap40(curve.orientation);
          }
        }
      }
    }
    result.classes.push_back(std::move(cls));
  }
  return result;
}

}  // namespace ddp3d::eval
