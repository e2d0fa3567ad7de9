// Bird's-eye-view pictures of a detection batch (`ddp3d test --show-dir`, mmdet3d's
// test.py --show-dir): per frame its points, ground-truth boxes (the frame's labels, every
// type but DontCare) and predictions (class and score), written as DIR/<frame id>.png.
#pragma once

#include <array>
#include <filesystem>
#include <string>
#include <vector>

#include "worker/engine/evaluator.h"
#include "worker/engine/sample.h"

namespace ddp3d::detection {

// The batch carries "points", "eval_gt" and "calib" per sample and meta "frame_id",
// "sample_idx", "gt_types", "classes" (KittiDetectionDataset); predictions "bboxes_3d",
// "scores_3d", "labels_3d". `range` is the detection range drawn. Returns the pictures written.
int write_detection_pictures(const engine::Batch& batch,
                             const std::vector<engine::Sample>& predictions,
                             const engine::DrawOptions& options,
                             const std::array<double, 6>& range);

// One sample as the training pipeline made it (`ddp3d data browse`): its "points" and, when
// present, the boxes it trains on ("gt_bboxes_3d" in the lidar frame, "gt_labels_3d"), after
// every augmentation (GT-database objects included), as `file` (PNG, written atomically).
// `classes` names the labels. Returns the number of boxes drawn.
int write_training_sample_picture(const engine::Sample& sample, const std::filesystem::path& file,
                                  const std::array<double, 6>& range,
                                  const std::vector<std::string>& classes,
                                  const std::string& title);

}  // namespace ddp3d::detection
