#include "common/metrics/collection.h"

#include <prometheus/metric_family.h>
#include <prometheus/text_serializer.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

namespace ddp3d::metrics {

Collection::Collection()
    : registry_(
          std::make_shared<prometheus::Registry>(prometheus::Registry::InsertBehavior::Merge)) {}

void Collection::add(std::shared_ptr<const prometheus::Collectable> source) {
  if (!source) throw std::invalid_argument("metrics: null source");
  std::set<std::string> taken;
  for (const auto& family : collect()) taken.insert(family.name);
  for (const auto& family : source->Collect()) {
    if (!taken.insert(family.name).second) {
      throw std::invalid_argument("metrics: family " + family.name +
                                  " is exposed twice (a source clashes with another)");
    }
  }
  sources_.push_back(std::move(source));
}

std::vector<prometheus::MetricFamily> Collection::collect() const {
  std::vector<prometheus::MetricFamily> out = registry_->Collect();
  for (const auto& source : sources_) {
    for (auto& family : source->Collect()) out.push_back(std::move(family));
  }
  std::erase_if(out, [](const prometheus::MetricFamily& f) { return f.metric.empty(); });
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

std::string Collection::text() const {
  std::vector<prometheus::MetricFamily> families = collect();
  // prometheus-cpp 1.0.1 writes HELP text as is; the format wants '\\' and '\n' escaped there
  // (label values it escapes itself).
  for (auto& family : families) {
    if (family.help.find_first_of("\\\n") == std::string::npos) continue;
    std::string escaped;
    for (const char ch : family.help) {
      if (ch == '\\') {
        escaped += "\\\\";
      } else if (ch == '\n') {
        escaped += "\\n";
      } else {
        escaped += ch;
      }
    }
    family.help = std::move(escaped);
  }
  return prometheus::TextSerializer().Serialize(families);
}

std::vector<double> exponential_buckets(double start, double factor, int count) {
  if (count < 1 || !(start > 0) || !(factor > 1) || !std::isfinite(start) ||
      !std::isfinite(factor)) {
    throw std::invalid_argument("exponential_buckets: need count >= 1, start > 0, factor > 1");
  }
  std::vector<double> bounds;
  bounds.reserve(static_cast<std::size_t>(count));
  double b = start;
  for (int i = 0; i < count; ++i, b *= factor) bounds.push_back(b);
  return bounds;
}

}  // namespace ddp3d::metrics
