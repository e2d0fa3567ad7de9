// "KittiMetric": KITTI AP of a detector's predictions (mmdet3d's KittiMetric). Each rank turns
// its predictions into records (LiDAR boxes + the frame's labels and calibration); rank 0
// converts the predictions to camera-frame KITTI objects, keeps those inside pcd_limit_range
// whose image box reaches into the image (as mmdet3d does), and runs eval::evaluate_kitti.
#pragma once

#include <ATen/core/Tensor.h>

#include <array>
#include <string>
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

class KittiMetric : public engine::Evaluator {
 public:
  explicit KittiMetric(std::array<double, 6> pcd_limit_range) : limit_range_(pcd_limit_range) {}

  void process(const engine::Batch& batch, const std::vector<engine::Sample>& predictions) override;
  engine::MetricMap compute_metrics(const std::vector<engine::Sample>& results) override;
  // Bird's-eye views of each frame (detection_pictures.h), the limit range drawn.
  bool can_draw() const override { return true; }
  void draw(const engine::Batch& batch, const std::vector<engine::Sample>& predictions,
            const engine::DrawOptions& options) override;

  // The last compute_metrics' full result (for its printed table).
  const eval::KittiEvalResult& last_result() const { return last_; }

 private:
  std::array<double, 6> limit_range_;
  eval::KittiEvalResult last_;
};

}  // namespace ddp3d::detection
