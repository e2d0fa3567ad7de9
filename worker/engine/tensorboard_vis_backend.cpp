#include "worker/engine/tensorboard_vis_backend.h"

#include <utility>
#include <vector>

#include "worker/engine/train_log.h"

namespace ddp3d::engine {

TensorboardVisBackend::TensorboardVisBackend(const std::filesystem::path& log_dir,
                                             std::function<void(const std::string&)> warn)
    : writer_(log_dir, std::move(warn)) {}

void TensorboardVisBackend::add_train_record(const IterRecord& r) {
  // scalars.json's keys, in its order; "iter" and "step" are the step itself.
  std::vector<std::pair<std::string, double>> scalars = {
      {"lr", r.lr}, {"momentum", r.momentum}, {"data_time", r.data_time}};
  for (const auto& loss : r.losses) scalars.push_back(loss);
  scalars.emplace_back("time", r.time);
  scalars.emplace_back("epoch", static_cast<double>(r.epoch));
  writer_.add_scalars(scalars, r.global_iter);
}

void TensorboardVisBackend::add_metrics(const std::string& mode, std::int64_t /*epoch*/,
                                        std::int64_t step,
                                        const std::map<std::string, double>& metrics) {
  if (mode != "val") return;
  // No "epoch": the training record at the same step has it already.
  writer_.add_scalars({metrics.begin(), metrics.end()}, step);
}

void TensorboardVisBackend::add_image(const std::string& tag, std::int64_t step,
                                      std::string_view png) {
  writer_.add_image(tag, step, png);
}

void TensorboardVisBackend::training_starts_at(std::int64_t step) {
  writer_.add_session_start(step);
}

}  // namespace ddp3d::engine
