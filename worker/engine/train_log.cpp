#include "worker/engine/train_log.h"

#include <cmath>
#include <cstdio>
#include <iomanip>
#include <sstream>
#include <stdexcept>

#include "common/json_string.h"
#include "common/local_time.h"
#include "common/log.h"

namespace ddp3d::engine {
namespace {

std::string sci(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4e", v);
  return buf;
}

std::string fixed4(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4f", v);
  return buf;
}

// JSON number: shortest round-trip-ish form; non-finite values become null.
std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.10g", v);
  return buf;
}

std::string padded(std::int64_t v, std::size_t width) {
  std::string s = std::to_string(v);
  return std::string(width > s.size() ? width - s.size() : 0, ' ') + s;
}

}  // namespace

std::string format_eta(double seconds) {
  auto total = static_cast<long long>(std::max(0.0, seconds));
  const long long days = total / 86400;
  total %= 86400;
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%lld:%02lld:%02lld", total / 3600, (total / 60) % 60,
                total % 60);
  if (days == 0) return buf;
  return std::to_string(days) + (days == 1 ? " day, " : " days, ") + buf;
}

std::string format_iter_line(const IterRecord& r) {
  const std::size_t width = std::to_string(r.iters_per_epoch).size();
  std::ostringstream out;
  out << "Epoch(train) [" << r.epoch << "][" << padded(r.iter_in_epoch, width) << "/"
      << r.iters_per_epoch << "]  lr: " << sci(r.lr) << "  eta: " << format_eta(r.eta_seconds)
      << "  time: " << fixed4(r.time) << "  data_time: " << fixed4(r.data_time);
  for (const auto& [name, value] : r.losses) out << "  " << name << ": " << fixed4(value);
  return out.str();
}

std::string format_iter_json(const IterRecord& r) {
  std::ostringstream out;
  out << "{\"lr\": " << json_number(r.lr) << ", \"momentum\": " << json_number(r.momentum)
      << ", \"data_time\": " << json_number(r.data_time);
  for (const auto& [name, value] : r.losses)
    out << ", " << json_quoted(name) << ": " << json_number(value);
  out << ", \"time\": " << json_number(r.time) << ", \"epoch\": " << r.epoch
      << ", \"iter\": " << r.global_iter << ", \"step\": " << r.global_iter << "}";
  return out.str();
}

std::string format_metrics_line(const std::string& mode, std::int64_t epoch, std::int64_t iters,
                                const std::map<std::string, double>& metrics) {
  std::ostringstream out;
  // mmengine: "Epoch(val) [3][4/4]", and without an epoch for a test run "Epoch(test) [4/4]".
  out << "Epoch(" << mode << ") ";
  if (mode != "test") out << "[" << epoch << "]";
  out << "[" << iters << "/" << iters << "]  ";
  for (const auto& [name, value] : metrics) out << "  " << name << ": " << fixed4(value);
  return out.str();
}

std::string format_metrics_json(std::int64_t epoch, std::int64_t global_iter,
                                const std::map<std::string, double>& metrics) {
  std::ostringstream out;
  out << "{";
  for (const auto& [name, value] : metrics)
    out << json_quoted(name) << ": " << json_number(value) << ", ";
  out << "\"epoch\": " << epoch << ", \"step\": " << global_iter << "}";
  return out.str();
}

std::string format_test_metrics_json(const std::string& config, const std::string& checkpoint,
                                     int world_size, std::int64_t samples, double wall_seconds,
                                     const std::map<std::string, double>& metrics) {
  std::ostringstream out;
  out << "{\"config\": " << json_quoted(config) << ", \"checkpoint\": " << json_quoted(checkpoint)
      << ", \"world_size\": " << world_size << ", \"samples\": " << samples
      << ", \"wall_time_s\": " << json_number(wall_seconds) << ", \"samples_per_s\": "
      << json_number(wall_seconds > 0 ? static_cast<double>(samples) / wall_seconds : 0.0)
      << ", \"metrics\": {";
  const char* sep = "";
  for (const auto& [name, value] : metrics) {
    char buf[40];
    std::snprintf(buf, sizeof(buf), "%.17g", value);
    out << sep << json_quoted(name) << ": " << (std::isfinite(value) ? buf : "null");
    sep = ", ";
  }
  out << "}}\n";
  return out.str();
}

TrainLog::TrainLog(bool enabled, const std::filesystem::path& run_dir, const std::string& timestamp,
                   const std::vector<std::string>& vis_backends)
    : enabled_(enabled) {
  if (!enabled_) return;
  std::filesystem::create_directories(run_dir);
  log_path_ = run_dir / (timestamp + ".log");
  json_path_ = run_dir / "vis_data" / "scalars.json";
  log_.open(log_path_, std::ios::app);
  if (!log_) {
    throw std::runtime_error("cannot write the training logs in " + run_dir.string());
  }
  for (const std::string& type : vis_backends) {
    vis_backends_.push_back(
        make_vis_backend(type, run_dir, [](const std::string& w) { ddp3d::log::warning(w); }));
  }
}

void TrainLog::to_file(const std::string& level, const std::string& line) {
  log_ << format_local_now("%Y/%m/%d %H:%M:%S") << " - ddp3d - " << level << " - " << line << "\n";
  log_.flush();
}

void TrainLog::info(const std::string& line) {
  if (!enabled_) return;
  ddp3d::log::info(line);
  to_file("INFO", line);
}

void TrainLog::warning(const std::string& line) {
  if (!enabled_) return;
  ddp3d::log::warning(line);
  to_file("WARNING", line);
}

void TrainLog::iteration(const IterRecord& r) {
  if (!enabled_) return;
  info(format_iter_line(r));
  for (const auto& backend : vis_backends_) backend->add_train_record(r);
}

void TrainLog::metrics(const std::string& mode, std::int64_t epoch, std::int64_t iters,
                       std::int64_t global_iter, const std::map<std::string, double>& metrics) {
  if (!enabled_) return;
  info(format_metrics_line(mode, epoch, iters, metrics));
  for (const auto& backend : vis_backends_) backend->add_metrics(mode, epoch, global_iter, metrics);
}

void TrainLog::training_starts_at(std::int64_t step) {
  for (const auto& backend : vis_backends_) backend->training_starts_at(step);
}

void TrainLog::image(const std::string& tag, std::int64_t step, std::string_view png) {
  for (const auto& backend : vis_backends_) backend->add_image(tag, step, png);
}

}  // namespace ddp3d::engine
