#include "worker/engine/grad_accumulation.h"

#include <stdexcept>
#include <string>

namespace ddp3d::engine {

GradAccumulation::GradAccumulation(std::int64_t counts, std::int64_t max_iters)
    : counts_(counts), max_iters_(max_iters) {
  if (counts < 1) {
    throw std::invalid_argument("optim_wrapper.accumulative_counts must be >= 1, got " +
                                std::to_string(counts));
  }
}

bool GradAccumulation::is_update_iter(std::int64_t iter) const {
  return (iter + 1) % counts_ == 0 || iter + 1 >= max_iters_;
}

double GradAccumulation::loss_divisor(std::int64_t iter) const {
  // Iterations from the start of the last (possibly short) group on.
  const std::int64_t last_group_start = (max_iters_ / counts_) * counts_;
  if (iter >= last_group_start && max_iters_ % counts_ != 0) {
    return static_cast<double>(max_iters_ - last_group_start);
  }
  return static_cast<double>(counts_);
}

}  // namespace ddp3d::engine
