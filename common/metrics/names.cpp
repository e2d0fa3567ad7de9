#include "common/metrics/names.h"

#include <set>
#include <stdexcept>

namespace ddp3d::metrics {
namespace {

bool is_alpha_(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

}  // namespace

bool is_valid_metric_name(std::string_view name) {
  if (name.empty()) return false;
  if (!is_alpha_(name[0]) && name[0] != ':') return false;
  for (char c : name.substr(1)) {
    if (!is_alpha_(c) && !is_digit(c) && c != ':') return false;
  }
  return true;
}

bool is_valid_label_name(std::string_view name) {
  if (name.empty() || !is_alpha_(name[0])) return false;
  if (name.starts_with("__")) return false;
  for (char c : name.substr(1)) {
    if (!is_alpha_(c) && !is_digit(c)) return false;
  }
  return true;
}

void check_metric_name(std::string_view name) {
  if (!is_valid_metric_name(name)) {
    throw std::invalid_argument("invalid metric name '" + std::string(name) +
                                "': must match [a-zA-Z_:][a-zA-Z0-9_:]*");
  }
}

void check_label_names(std::string_view metric, const std::vector<std::string>& label_names) {
  std::set<std::string_view> seen;
  for (const auto& label : label_names) {
    if (!is_valid_label_name(label)) {
      throw std::invalid_argument("metric '" + std::string(metric) + "': invalid label name '" +
                                  label +
                                  "': must match [a-zA-Z_][a-zA-Z0-9_]* and not start with '__'");
    }
    if (!seen.insert(label).second) {
      throw std::invalid_argument("metric '" + std::string(metric) + "': duplicate label name '" +
                                  label + "'");
    }
  }
}

}  // namespace ddp3d::metrics
