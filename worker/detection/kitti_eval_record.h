// How a frame's ground truth and calibration travel with a sample and its evaluation record
// as tensors (so they are batched, gathered across ranks and serialised generically), and
// back into the evaluator's form.
#pragma once

#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

#include "worker/data/kitti_calib.h"
#include "worker/data/kitti_label.h"
#include "worker/eval/kitti_eval_frames.h"

namespace ddp3d::detection {

// [G, 15] float64: truncated, occluded, alpha, bbox (4), dimensions (3), location (3),
// rotation_y, score. The types go separately (types_to_meta).
at::Tensor pack_objects(const std::vector<data::KittiObject>& objects);
std::string types_to_meta(const std::vector<data::KittiObject>& objects);
// The inverse; `types` is the meta string. Throws std::invalid_argument on a size mismatch.
std::vector<eval::EvalObject> unpack_objects(const at::Tensor& packed, const std::string& types);

// One object in the label file's form and in the evaluator's, every field carried over; a
// KittiObject's score travels only when has_score (`with_score` sets it the other way).
eval::EvalObject to_eval_object(const data::KittiObject& object);
data::KittiObject to_kitti_object(const eval::EvalObject& object, bool with_score);

// [36] float64: P2 (12), R0_rect (9), Tr_velo_to_cam (12), 3 zeros of padding.
at::Tensor pack_calib(const data::KittiCalib& calib);
data::KittiCalib unpack_calib(const at::Tensor& packed);

}  // namespace ddp3d::detection
