// mmengine's LocalVisBackend: one JSON object per logged iteration and per evaluation in
// <run_dir>/vis_data/scalars.json (train_log.h's format_*_json), pictures as
// <run_dir>/vis_data/vis_image/<tag>_<step>.png.
#pragma once

#include <filesystem>
#include <fstream>

#include "worker/engine/vis_backend.h"

namespace ddp3d::engine {

class LocalVisBackend final : public VisBackend {
 public:
  // Throws std::runtime_error when scalars.json cannot be opened.
  explicit LocalVisBackend(const std::filesystem::path& run_dir);
  void add_train_record(const IterRecord& r) override;
  void add_metrics(const std::string& mode, std::int64_t epoch, std::int64_t step,
                   const std::map<std::string, double>& metrics) override;
  void add_image(const std::string& tag, std::int64_t step, std::string_view png) override;

 private:
  std::filesystem::path dir_;
  std::ofstream json_;
};

}  // namespace ddp3d::engine
