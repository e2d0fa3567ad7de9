// Small box helpers shared by the head, the coder and the tests.
#pragma once

#include <ATen/core/Tensor.h>

namespace ddp3d::models {

// mmdet3d's limit_period: maps val into [-offset·period, (1-offset)·period).
at::Tensor limit_period(const at::Tensor& val, double offset, double period);

// Direction-bin targets: which of num_bins equal sectors the ground-truth yaw
// (anchor yaw + regression target) falls in, after shifting by dir_offset.
at::Tensor direction_target(const at::Tensor& anchors, const at::Tensor& reg_targets,
                            double dir_offset, double dir_limit_offset, int64_t num_bins = 2);

}  // namespace ddp3d::models
