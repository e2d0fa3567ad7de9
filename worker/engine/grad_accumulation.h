// Gradient accumulation (mmengine's accumulative_counts): gradients of `counts` consecutive
// iterations are summed before one optimizer step. Each iteration's loss is divided by the size
// of its group, so the update equals one step on the concatenated batches; the last group of
// training may be shorter, and is divided by its own size (as mmengine does). Only the last
// iteration of a group all-reduces gradients (DDP no_sync for the others).
#pragma once

#include <cstdint>

namespace ddp3d::engine {

class GradAccumulation {
 public:
  // `max_iters`: the total iterations of training (so the final group can be shorter).
  GradAccumulation(std::int64_t counts, std::int64_t max_iters);

  std::int64_t counts() const { return counts_; }
  // True when iteration `iter` (0-based, global) ends a group: sync gradients and step.
  bool is_update_iter(std::int64_t iter) const;
  // The number the loss of iteration `iter` is divided by.
  double loss_divisor(std::int64_t iter) const;

 private:
  std::int64_t counts_;
  std::int64_t max_iters_;
};

}  // namespace ddp3d::engine
