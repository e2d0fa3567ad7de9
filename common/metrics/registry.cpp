#include "common/metrics/registry.h"

#include <algorithm>
#include <stdexcept>

#include "common/metrics/exposition.h"
#include "common/metrics/names.h"

namespace ddp3d::metrics {
namespace {

// The sample names a family of this type puts on the wire.
std::vector<std::string> sample_names(const std::string& name, MetricType type) {
  if (type == MetricType::kHistogram) {
    return {name, name + "_bucket", name + "_sum", name + "_count"};
  }
  return {name};
}

void check_common(const std::string& name, const std::string& help, MetricType type,
                  const std::vector<std::string>& label_names) {
  check_metric_name(name);
  if (help.empty()) {
    throw std::invalid_argument("metric '" + name + "': help text must not be empty");
  }
  check_label_names(name, label_names);
  if (type == MetricType::kCounter && (name.size() <= 6 || !name.ends_with("_total"))) {
    throw std::invalid_argument("counter '" + name + "': counter names must end in '_total'");
  }
  // promtool lints these suffixes on anything but histograms and summaries.
  if (type != MetricType::kHistogram) {
    for (const char* suffix : {"_bucket", "_count", "_sum"}) {
      if (name.ends_with(suffix)) {
        throw std::invalid_argument(std::string(metric_type_name(type)) + " '" + name +
                                    "': the suffix '" + suffix + "' is reserved for histograms");
      }
    }
  }
  if (type == MetricType::kHistogram &&
      std::find(label_names.begin(), label_names.end(), "le") != label_names.end()) {
    throw std::invalid_argument("histogram '" + name +
                                "': label name 'le' is reserved for bucket bounds");
  }
}

// A second registration must describe the same family as the first.
template <class F>
F& existing_as(FamilyBase& family, MetricType type, const std::string& help,
               const std::vector<std::string>& label_names) {
  const std::string& name = family.name();
  if (family.type() != type) {
    throw std::invalid_argument("metric '" + name + "' is already registered as a " +
                                metric_type_name(family.type()) + ", not a " +
                                metric_type_name(type));
  }
  if (family.help() != help) {
    throw std::invalid_argument("metric '" + name +
                                "' is already registered with a different help text");
  }
  if (family.label_names() != label_names) {
    throw std::invalid_argument("metric '" + name +
                                "' is already registered with different label names");
  }
  return static_cast<F&>(family);
}

}  // namespace

void Registry::reserve_name(const std::string& name, MetricType type) {
  const auto names = sample_names(name, type);
  for (const auto& n : names) {
    if (const auto it = taken_names_.find(n); it != taken_names_.end()) {
      std::string message = "metric '" + name + "' (" + metric_type_name(type) + ") clashes with '";
      message.append(n).append("' already exposed by '").append(it->second).append("'");
      throw std::invalid_argument(message);
    }
  }
  for (const auto& n : names) {
    taken_names_.emplace(n, name);
  }
}

CounterFamily& Registry::counter(const std::string& name, const std::string& help,
                                 const std::vector<std::string>& label_names) {
  check_common(name, help, MetricType::kCounter, label_names);
  std::lock_guard lock(mutex_);
  if (const auto it = families_.find(name); it != families_.end()) {
    return existing_as<CounterFamily>(*it->second, MetricType::kCounter, help, label_names);
  }
  reserve_name(name, MetricType::kCounter);
  auto family = std::make_unique<CounterFamily>(name, help, label_names);
  auto& ref = *family;
  families_.emplace(name, std::move(family));
  return ref;
}

GaugeFamily& Registry::gauge(const std::string& name, const std::string& help,
                             const std::vector<std::string>& label_names) {
  check_common(name, help, MetricType::kGauge, label_names);
  std::lock_guard lock(mutex_);
  if (const auto it = families_.find(name); it != families_.end()) {
    return existing_as<GaugeFamily>(*it->second, MetricType::kGauge, help, label_names);
  }
  reserve_name(name, MetricType::kGauge);
  auto family = std::make_unique<GaugeFamily>(name, help, label_names);
  auto& ref = *family;
  families_.emplace(name, std::move(family));
  return ref;
}

HistogramFamily& Registry::histogram(const std::string& name, const std::string& help,
                                     const std::vector<double>& upper_bounds,
                                     const std::vector<std::string>& label_names) {
  check_common(name, help, MetricType::kHistogram, label_names);
  // Validate the bounds before taking the name (throws with the bad bound).
  const std::vector<double> bounds = Histogram(upper_bounds).upper_bounds();
  std::lock_guard lock(mutex_);
  if (const auto it = families_.find(name); it != families_.end()) {
    auto& existing =
        existing_as<HistogramFamily>(*it->second, MetricType::kHistogram, help, label_names);
    if (existing.upper_bounds() != bounds) {
      throw std::invalid_argument("histogram '" + name +
                                  "' is already registered with different buckets");
    }
    return existing;
  }
  reserve_name(name, MetricType::kHistogram);
  auto family = std::make_unique<HistogramFamily>(name, help, bounds, label_names);
  auto& ref = *family;
  families_.emplace(name, std::move(family));
  return ref;
}

void Registry::add_collector(std::shared_ptr<const Collector> collector) {
  if (!collector) {
    throw std::invalid_argument("add_collector: null collector");
  }
  const auto families = collector->collect();
  std::lock_guard lock(mutex_);
  // Check every name first so a failed add leaves nothing reserved.
  std::map<std::string, std::string> added;
  for (const auto& f : families) {
    check_metric_name(f.name);
    for (const auto& n : sample_names(f.name, f.type)) {
      if (taken_names_.count(n) || added.count(n)) {
        throw std::invalid_argument("collector metric '" + f.name + "' clashes with '" + n +
                                    "' already exposed");
      }
      added.emplace(n, f.name);
    }
  }
  taken_names_.insert(added.begin(), added.end());
  collectors_.push_back(std::move(collector));
}

std::vector<FamilySnapshot> Registry::collect() const {
  std::vector<FamilySnapshot> out;
  std::vector<std::shared_ptr<const Collector>> collectors;
  {
    std::lock_guard lock(mutex_);
    out.reserve(families_.size());
    for (const auto& [name, family] : families_) {
      FamilySnapshot snap{name, family->help(), family->type(), {}};
      family->collect(snap.samples);
      if (!snap.samples.empty()) {
        out.push_back(std::move(snap));
      }
    }
    collectors = collectors_;
  }
  // Collectors may do I/O (e.g. /proc): run them without holding the registry lock.
  for (const auto& c : collectors) {
    for (auto& f : c->collect()) {
      if (!f.samples.empty()) {
        out.push_back(std::move(f));
      }
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const FamilySnapshot& a, const FamilySnapshot& b) {
    return a.name < b.name;
  });
  return out;
}

std::string Registry::expose() const {
  return write_text(collect());
}

}  // namespace ddp3d::metrics
