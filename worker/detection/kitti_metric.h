// "KittiMetric": KITTI AP of a detector's predictions (mmdet3d's KittiMetric). Each rank turns
// its predictions into records (LiDAR boxes + the frame's labels and calibration); rank 0
// converts the predictions to camera-frame KITTI objects, keeps those inside pcd_limit_range
// whose image box reaches into the image (as mmdet3d does), and runs eval::evaluate_kitti.
#pragma once

#include <ATen/core/Tensor.h>

#include <array>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "worker/data/kitti_calib.h"
#include "worker/engine/evaluator.h"
#include "worker/eval/kitti_eval.h"

namespace ddp3d::detection {

// Predicted LiDAR boxes [K, 7] (bottom centre, l, w, h, yaw) with scores [K] and labels [K]
// (indices into class_names) as KITTI result objects; boxes outside limit_range or outside
// the image are dropped.
std::vector<eval::EvalObject> detections_to_kitti(const at::Tensor& boxes, const at::Tensor& scores,
                                                  const at::Tensor& labels,
                                                  const data::KittiCalib& calib,
                                                  const std::vector<std::string>& class_names,
                                                  const std::array<double, 6>& limit_range);

// KITTI result files (the object benchmark's submission format, mmdet3d's format_only with a
// submission_prefix): one `<frame id>.txt` per frame, every detection a line of 16 fields
// (truncated and occluded -1, four decimals), an empty file for a frame without detections.
// Written atomically into `dir`, created if missing; throws std::runtime_error naming it.
void write_kitti_submission(const std::filesystem::path& dir, const std::string& frame_id,
                            const std::vector<eval::EvalObject>& detections);

struct KittiMetricOptions {
  std::array<double, 6> pcd_limit_range{0, -40, -3, 70.4, 40, 0};
  std::string submission_prefix;  // empty: no result files
  bool format_only = false;       // only the result files, no AP
};

class KittiMetric : public engine::Evaluator {
 public:
  explicit KittiMetric(std::array<double, 6> pcd_limit_range)
      : KittiMetric(KittiMetricOptions{pcd_limit_range, "", false}) {}
  explicit KittiMetric(KittiMetricOptions options)
      : limit_range_(options.pcd_limit_range), options_(std::move(options)) {}

  void process(const engine::Batch& batch, const std::vector<engine::Sample>& predictions) override;
  engine::MetricMap compute_metrics(const std::vector<engine::Sample>& results) override;
  // 3D AP at moderate difficulty (AP40, else AP11): the class mean when several classes are
  // evaluated, else the class's at strict overlap; higher is better.
  std::optional<engine::KeyMetric> key_metric(const engine::MetricMap& metrics) const override;
  // Bird's-eye views of each frame (detection_pictures.h), the limit range drawn.
  bool can_draw() const override { return true; }
  void draw(const engine::Batch& batch, const std::vector<engine::Sample>& predictions,
            const engine::DrawOptions& options) override;

  // The last compute_metrics' full result (for its printed table).
  const eval::KittiEvalResult& last_result() const { return last_; }

 private:
  std::array<double, 6> limit_range_;
  KittiMetricOptions options_;
  eval::KittiEvalResult last_;
};

}  // namespace ddp3d::detection
