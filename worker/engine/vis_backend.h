// mmengine's visualization backends (`visualizer.vis_backends` in the config): where the
// scalars LoggerHook logs, the validation metrics and pictures go besides the human log.
// LocalVisBackend writes <run_dir>/vis_data/scalars.json (and vis_image/ for pictures);
// TensorboardVisBackend writes TensorBoard event files into <work_dir>/tensorboard. TrainLog
// owns them and calls them on rank 0 only.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

namespace ddp3d::engine {

struct IterRecord;

class VisBackend {
 public:
  virtual ~VisBackend() = default;
  // A logged training iteration (window means, step = its global iteration).
  virtual void add_train_record(const IterRecord& r) = 0;
  // `mode` "val" (during training, at `step` = iterations done) or "test".
  virtual void add_metrics(const std::string& mode, std::int64_t epoch, std::int64_t step,
                           const std::map<std::string, double>& metrics) = 0;
  // A PNG picture under `tag` at `step`.
  virtual void add_image(const std::string& tag, std::int64_t step, std::string_view png) = 0;
  // Training (re)starts: the next record has a step of at least `step` (1 for a new run).
  virtual void training_starts_at(std::int64_t /*step*/) {}
};

// The backend a config's `type` names: "LocalVisBackend" or "TensorboardVisBackend".
// `run_dir` is <work_dir>/<timestamp>; `warn` reports write failures that do not stop
// training. Throws std::invalid_argument for another type.
std::unique_ptr<VisBackend> make_vis_backend(const std::string& type,
                                             const std::filesystem::path& run_dir,
                                             const std::function<void(const std::string&)>& warn);

}  // namespace ddp3d::engine
