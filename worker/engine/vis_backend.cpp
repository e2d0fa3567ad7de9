#include "worker/engine/vis_backend.h"

#include <stdexcept>

#include "worker/engine/local_vis_backend.h"
#include "worker/engine/tensorboard_vis_backend.h"

namespace ddp3d::engine {

std::unique_ptr<VisBackend> make_vis_backend(const std::string& type,
                                             const std::filesystem::path& run_dir,
                                             const std::function<void(const std::string&)>& warn) {
  if (type == "LocalVisBackend") return std::make_unique<LocalVisBackend>(run_dir);
  if (type == "TensorboardVisBackend") {
    // One directory per work dir (run_dir's parent): a resumed run continues the same charts.
    return std::make_unique<TensorboardVisBackend>(run_dir.parent_path() / "tensorboard", warn);
  }
  throw std::invalid_argument("unknown visualization backend '" + type +
                              "' (LocalVisBackend or TensorboardVisBackend)");
}

}  // namespace ddp3d::engine
