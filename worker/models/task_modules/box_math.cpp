#include "worker/models/task_modules/box_math.h"

#include <ATen/ATen.h>

#include <cmath>

namespace ddp3d::models {

at::Tensor limit_period(const at::Tensor& val, double offset, double period) {
  return val - at::floor(val / period + offset) * period;
}

at::Tensor direction_target(const at::Tensor& anchors, const at::Tensor& reg_targets,
                            double dir_offset, double dir_limit_offset, int64_t num_bins) {
  const at::Tensor yaw = reg_targets.select(-1, 6) + anchors.select(-1, 6);
  const at::Tensor shifted = limit_period(yaw - dir_offset, dir_limit_offset, 2 * M_PI);
  return at::floor(shifted / (2 * M_PI / static_cast<double>(num_bins)))
      .to(at::kLong)
      .clamp(0, num_bins - 1);
}

}  // namespace ddp3d::models
