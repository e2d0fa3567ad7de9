#include "worker/detection/repeat_dataset.h"

#include <stdexcept>
#include <string>

namespace ddp3d::detection {

RepeatDataset::RepeatDataset(std::shared_ptr<const engine::Dataset> inner, std::int64_t times)
    : inner_(std::move(inner)), times_(times) {
  if (times_ < 1) throw std::invalid_argument("RepeatDataset: times must be >= 1");
}

}  // namespace ddp3d::detection
