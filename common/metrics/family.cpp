#include "common/metrics/family.h"

#include <stdexcept>

namespace ddp3d::metrics {
namespace {

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += ", ";
    out += item;
  }
  return out;
}

}  // namespace

FamilyBase::FamilyBase(std::string name, std::string help, MetricType type,
                       std::vector<std::string> label_names)
    : name_(std::move(name)),
      help_(std::move(help)),
      type_(type),
      label_names_(std::move(label_names)) {}

void FamilyBase::check_label_values(const std::vector<std::string>& values) const {
  if (values.size() != label_names_.size()) {
    throw std::invalid_argument("metric '" + name_ + "' has labels {" + join(label_names_) +
                                "} but got " + std::to_string(values.size()) + " value(s) {" +
                                join(values) + "}");
  }
}

void FamilyBase::throw_labelled() const {
  throw std::logic_error("metric '" + name_ + "' has labels {" + join(label_names_) +
                         "}: use labels({...}) to pick a series");
}

LabelPairs FamilyBase::pairs(const std::vector<std::string>& values) const {
  LabelPairs out;
  out.reserve(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) out.emplace_back(label_names_[i], values[i]);
  return out;
}

CounterFamily::CounterFamily(std::string name, std::string help,
                             std::vector<std::string> label_names)
    : Family(std::move(name), std::move(help), MetricType::kCounter, std::move(label_names),
             [] { return std::make_unique<Counter>(); }) {}

GaugeFamily::GaugeFamily(std::string name, std::string help, std::vector<std::string> label_names)
    : Family(std::move(name), std::move(help), MetricType::kGauge, std::move(label_names),
             [] { return std::make_unique<Gauge>(); }) {}

HistogramFamily::HistogramFamily(std::string name, std::string help,
                                 std::vector<double> upper_bounds,
                                 std::vector<std::string> label_names)
    : Family(std::move(name), std::move(help), MetricType::kHistogram, std::move(label_names),
             // Validated by Histogram's constructor; copied per series.
             [bounds = upper_bounds] { return std::make_unique<Histogram>(bounds); }),
      upper_bounds_(Histogram(std::move(upper_bounds)).upper_bounds()) {}

}  // namespace ddp3d::metrics
