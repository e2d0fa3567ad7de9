#include "worker/engine/run_summary.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string_view>

#include "common/json_string.h"
#include "worker/engine/train_log.h"

namespace ddp3d::engine {
namespace {

constexpr std::array<const char*, 3> kDifficulties = {"easy", "moderate", "hard"};
constexpr std::array<const char*, 3> kKinds = {"3D", "BEV", "AOS"};

// One KITTI metric name taken apart: KITTI/<class>_<kind>_<ap>_<difficulty>[_<setting>].
struct ApKey {
  std::string cls;
  std::string kind;
  std::string ap;
  std::size_t difficulty = 0;
  std::string setting;  // "strict", "loose", or "" (class means)
};

std::optional<ApKey> parse_ap_key(const std::string& name) {
  constexpr std::string_view kPrefix = "KITTI/";
  if (name.rfind(kPrefix, 0) != 0) return std::nullopt;
  std::vector<std::string> parts;
  std::stringstream in(name.substr(kPrefix.size()));
  for (std::string part; std::getline(in, part, '_');) parts.push_back(part);
  ApKey key;
  if (!parts.empty() && (parts.back() == "strict" || parts.back() == "loose")) {
    key.setting = parts.back();
    parts.pop_back();
  }
  if (parts.size() < 4) return std::nullopt;
  const auto diff = std::find(kDifficulties.begin(), kDifficulties.end(), parts.back());
  if (diff == kDifficulties.end()) return std::nullopt;
  key.difficulty = static_cast<std::size_t>(diff - kDifficulties.begin());
  parts.pop_back();
  key.ap = parts.back();
  parts.pop_back();
  if (key.ap != "AP40" && key.ap != "AP11") return std::nullopt;
  key.kind = parts.back();
  parts.pop_back();
  key.cls = parts.front();
  for (std::size_t i = 1; i < parts.size(); ++i) key.cls += "_" + parts[i];
  return key;
}

std::string fixed(double v, int digits) {
  if (!std::isfinite(v)) return "-";
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

std::string right(const std::string& s, std::size_t width) {
  return std::string(width > s.size() ? width - s.size() : 0, ' ') + s;
}

std::string left(const std::string& s, std::size_t width) {
  return s + std::string(width > s.size() ? width - s.size() : 0, ' ');
}

std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  return buf;
}

// Seconds for runs under a minute ("12.3 s"), h:mm:ss beyond.
std::string wall_time(double seconds) {
  if (std::isfinite(seconds) && seconds < 60) return fixed(std::max(seconds, 0.0), 1) + " s";
  return format_eta(seconds);
}

double samples_per_second(const RunSummary& s) {
  return s.wall_seconds > 0 ? static_cast<double>(s.samples) / s.wall_seconds : 0.0;
}

// The metrics the summary shows: the best validation's (train) or the test's.
const MetricMap* shown_metrics(const RunSummary& s, std::optional<std::size_t> best) {
  if (s.mode == "test") return &s.metrics;
  if (best) return &s.validations[*best].metrics;
  return s.validations.empty() ? nullptr : &s.validations.back().metrics;
}

std::optional<std::size_t> best_of(const RunSummary& s) {
  if (!s.key) return std::nullopt;
  return best_validation(s.validations, *s.key);
}

}  // namespace

std::optional<std::size_t> best_validation(const std::vector<ValidationRecord>& validations,
                                           const KeyMetric& key) {
  std::optional<std::size_t> best;
  double best_value = 0;
  for (std::size_t i = 0; i < validations.size(); ++i) {
    const auto it = validations[i].metrics.find(key.name);
    if (it == validations[i].metrics.end() || !std::isfinite(it->second)) continue;
    const bool better = key.greater_is_better ? it->second > best_value : it->second < best_value;
    if (!best || better) {
      best = i;
      best_value = it->second;
    }
  }
  return best;
}

std::vector<std::string> format_ap_table(const MetricMap& metrics) {
  std::vector<std::pair<std::string, ApKey>> keys;
  bool any_ap40 = false;
  for (const auto& [name, value] : metrics) {
    if (auto key = parse_ap_key(name)) {
      any_ap40 = any_ap40 || key->ap == "AP40";
      keys.emplace_back(name, *key);
    }
  }
  const std::string ap = any_ap40 ? "AP40" : "AP11";
  // Rows in class order (the class means last), 3D, BEV, AOS within a class.
  std::vector<std::string> classes;
  for (const auto& [name, key] : keys) {
    if (std::find(classes.begin(), classes.end(), key.cls) == classes.end())
      classes.push_back(key.cls);
  }
  std::stable_partition(classes.begin(), classes.end(),
                        [](const std::string& c) { return c != "Overall"; });
  struct Row {
    std::string label;
    std::array<double, 3> values;
  };
  std::vector<Row> rows;
  for (const std::string& cls : classes) {
    for (const char* kind : kKinds) {
      Row row{cls + " " + kind, {NAN, NAN, NAN}};
      bool any_finite = false;
      for (const auto& [name, key] : keys) {
        if (key.cls != cls || key.kind != kind || key.ap != ap) continue;
        if (key.setting != "strict" && !key.setting.empty()) continue;
        row.values[key.difficulty] = metrics.at(name);
        any_finite = any_finite || std::isfinite(metrics.at(name));
      }
      if (any_finite) rows.push_back(row);
    }
  }
  if (rows.empty()) return {};
  std::size_t width = ap.size() + 9;
  for (const Row& row : rows) width = std::max(width, row.label.size() + 2);
  std::vector<std::string> out;
  std::string header = left(ap + " (strict)", width);
  for (const char* d : kDifficulties) header += right(d, 10);
  out.push_back(header);
  for (const Row& row : rows) {
    std::string line = left(row.label, width);
    for (const double v : row.values) line += right(fixed(v, 2), 10);
    out.push_back(line);
  }
  return out;
}

std::vector<std::string> format_run_summary(const RunSummary& s) {
  const std::optional<std::size_t> best = best_of(s);
  std::string head = "Summary: " + s.mode;
  if (s.mode == "train") {
    head += (s.stopped ? " stopped (" + *s.stopped + ") at " : " finished at ") + "epoch " +
            std::to_string(s.epochs) + ", iteration " + std::to_string(s.iters) + ";";
  }
  head += " " + std::to_string(s.samples) + " samples in " + wall_time(s.wall_seconds) + " (" +
          fixed(samples_per_second(s), 1) + " samples/s)";
  if (best) {
    const ValidationRecord& v = s.validations[*best];
    head += "; best epoch " + std::to_string(v.epoch) + ": " + s.key->name + " " +
            fixed(v.metrics.at(s.key->name), 4);
    if (*best + 1 != s.validations.size()) {
      const auto last = s.validations.back().metrics.find(s.key->name);
      if (last != s.validations.back().metrics.end())
        head += " (last: " + fixed(last->second, 4) + ")";
    }
  } else if (s.mode == "train" && s.validations.empty()) {
    head += "; no validation ran";
  }
  std::vector<std::string> out{head};
  const MetricMap* metrics = shown_metrics(s, best);
  if (metrics == nullptr || metrics->empty()) return out;
  std::vector<std::string> table = format_ap_table(*metrics);
  if (table.empty()) {
    std::string line = "  metrics:";
    for (const auto& [name, value] : *metrics) {
      char buf[48];
      std::snprintf(buf, sizeof(buf), "%.6g", value);
      line += "  " + name + " " + buf;
    }
    out.push_back(line);
  }
  for (std::string& row : table) out.push_back("  " + row);
  return out;
}

std::string format_run_summary_json(const RunSummary& s) {
  const std::optional<std::size_t> best = best_of(s);
  std::ostringstream out;
  out << "{\"mode\": " << json_quoted(s.mode)
      << ", \"wall_time_s\": " << json_number(s.wall_seconds) << ", \"samples\": " << s.samples
      << ", \"samples_per_s\": " << json_number(samples_per_second(s))
      << ", \"epochs\": " << s.epochs << ", \"iters\": " << s.iters
      << ", \"stopped\": " << (s.stopped ? json_quoted(*s.stopped) : "null")
      << ", \"key_metric\": ";
  if (s.key) {
    out << "{\"name\": " << json_quoted(s.key->name)
        << ", \"greater_is_better\": " << (s.key->greater_is_better ? "true" : "false") << "}";
  } else {
    out << "null";
  }
  out << ", \"best\": ";
  if (best) {
    const ValidationRecord& v = s.validations[*best];
    out << "{\"epoch\": " << v.epoch << ", \"iter\": " << v.iter
        << ", \"value\": " << json_number(v.metrics.at(s.key->name)) << "}";
  } else {
    out << "null";
  }
  out << ", \"metrics\": {";
  if (const MetricMap* metrics = shown_metrics(s, best)) {
    const char* sep = "";
    for (const auto& [name, value] : *metrics) {
      out << sep << json_quoted(name) << ": " << json_number(value);
      sep = ", ";
    }
  }
  out << "}}\n";
  return out.str();
}

}  // namespace ddp3d::engine
