#include "worker/engine/local_vis_backend.h"

#include <stdexcept>

#include "worker/engine/train_log.h"

namespace ddp3d::engine {

LocalVisBackend::LocalVisBackend(const std::filesystem::path& run_dir)
    : dir_(run_dir / "vis_data") {
  std::filesystem::create_directories(dir_);
  json_.open(dir_ / "scalars.json", std::ios::app);
  if (!json_) throw std::runtime_error("cannot write " + (dir_ / "scalars.json").string());
}

void LocalVisBackend::add_train_record(const IterRecord& r) {
  json_ << format_iter_json(r) << "\n";
  json_.flush();
}

void LocalVisBackend::add_metrics(const std::string& /*mode*/, std::int64_t epoch,
                                  std::int64_t step, const std::map<std::string, double>& metrics) {
  json_ << format_metrics_json(epoch, step, metrics) << "\n";
  json_.flush();
}

void LocalVisBackend::add_image(const std::string& tag, std::int64_t step, std::string_view png) {
  std::string name;
  for (const char c : tag) name += (c == '/' || c == '\\' || c == '\0') ? '_' : c;
  const std::filesystem::path dir = dir_ / "vis_image";
  std::filesystem::create_directories(dir);
  std::ofstream out(dir / (name + "_" + std::to_string(step) + ".png"), std::ios::binary);
  out.write(png.data(), static_cast<std::streamsize>(png.size()));
}

}  // namespace ddp3d::engine
