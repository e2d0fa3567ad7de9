// Bird's-eye-view pictures of a detection batch (`ddp3d test --show-dir`, mmdet3d's
// test.py --show-dir): per frame its points, ground-truth boxes (the frame's labels, every
// type but DontCare) and predictions (class and score), written as DIR/<frame id>.png.
#pragma once

#include <array>
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

}  // namespace ddp3d::detection
