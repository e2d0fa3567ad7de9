// mmengine's TensorboardVisBackend, without Python: every scalar of scalars.json's training
// records (lr, momentum, data_time, each loss term, time, epoch) and the validation metrics as
// TensorBoard scalars at step = global iteration, pictures as TensorBoard images. One directory
// per work dir (<work_dir>/tensorboard), a new event file per process; training (re)starts
// write a SessionLog START at their first step, so TensorBoard shows a resumed run's steps
// once, from the resumed run.
#pragma once

#include <filesystem>
#include <functional>
#include <string>

#include "worker/engine/vis_backend.h"
#include "worker/visual/tensorboard_event_writer.h"

namespace ddp3d::engine {

class TensorboardVisBackend final : public VisBackend {
 public:
  TensorboardVisBackend(const std::filesystem::path& log_dir,
                        std::function<void(const std::string&)> warn);
  void add_train_record(const IterRecord& r) override;
  // Validation metrics only: a test run has no training step to chart them at.
  void add_metrics(const std::string& mode, std::int64_t epoch, std::int64_t step,
                   const std::map<std::string, double>& metrics) override;
  void add_image(const std::string& tag, std::int64_t step, std::string_view png) override;
  void training_starts_at(std::int64_t step) override;

 private:
  visual::TensorboardEventWriter writer_;
};

}  // namespace ddp3d::engine
