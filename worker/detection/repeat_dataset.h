// "RepeatDataset": an epoch visits the inner dataset `times` times (mmengine's RepeatDataset),
// which keeps short datasets from paying the per-epoch overhead (validation, checkpoints).
#pragma once

#include <memory>

#include "worker/engine/dataset.h"

namespace ddp3d::detection {

class RepeatDataset : public engine::Dataset {
 public:
  // Throws std::invalid_argument when times < 1.
  RepeatDataset(std::shared_ptr<const engine::Dataset> inner, std::int64_t times);

  std::int64_t size() const override { return inner_->size() * times_; }
  engine::Sample get(std::int64_t index, at::Generator& rng) const override {
    return inner_->get(index % inner_->size(), rng);
  }
  std::set<std::string> list_fields() const override { return inner_->list_fields(); }
  engine::Batch collate(const std::vector<engine::Sample>& samples) const override {
    return inner_->collate(samples);
  }
  const std::shared_ptr<const engine::Dataset>& inner() const { return inner_; }

 private:
  std::shared_ptr<const engine::Dataset> inner_;
  std::int64_t times_;
};

}  // namespace ddp3d::detection
