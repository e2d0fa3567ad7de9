// A metric family: one name, help text, type and label-name list, holding one child series
// per distinct tuple of label values. Children are created on first use and live as long as
// the family (i.e. the Registry), so references returned by labels() stay valid unless the
// series is remove()d.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/metrics/metric.h"
#include "common/metrics/snapshot.h"

namespace ddp3d::metrics {

class FamilyBase {
 public:
  FamilyBase(std::string name, std::string help, MetricType type,
             std::vector<std::string> label_names);
  virtual ~FamilyBase() = default;
  FamilyBase(const FamilyBase&) = delete;
  FamilyBase& operator=(const FamilyBase&) = delete;

  const std::string& name() const { return name_; }
  const std::string& help() const { return help_; }
  MetricType type() const { return type_; }
  const std::vector<std::string>& label_names() const { return label_names_; }

  // Appends this family's samples, children ordered by label values.
  virtual void collect(std::vector<Sample>& out) const = 0;

 protected:
  // Throws std::invalid_argument when values.size() differs from label_names().size().
  void check_label_values(const std::vector<std::string>& values) const;
  // Throws std::logic_error: the no-label shortcuts were used on a labelled family.
  [[noreturn]] void throw_labelled() const;
  LabelPairs pairs(const std::vector<std::string>& values) const;

 private:
  std::string name_;
  std::string help_;
  MetricType type_;
  std::vector<std::string> label_names_;
};

template <class T>
class Family : public FamilyBase {
 public:
  // The child for these label values (in label-name order), created at zero on first use.
  T& labels(const std::vector<std::string>& values) {
    check_label_values(values);
    std::lock_guard lock(mutex_);
    auto it = children_.find(values);
    if (it == children_.end()) it = children_.emplace(values, make_()).first;
    return *it->second;
  }

  // Drops one series (e.g. of a deleted job). References to it become dangling.
  // Returns whether it existed.
  bool remove(const std::vector<std::string>& values) {
    check_label_values(values);
    if (values.empty()) return false;  // the unlabelled series is permanent
    std::lock_guard lock(mutex_);
    return children_.erase(values) > 0;
  }

  std::size_t size() const {
    std::lock_guard lock(mutex_);
    return children_.size();
  }

  void collect(std::vector<Sample>& out) const override {
    std::lock_guard lock(mutex_);
    for (const auto& [values, child] : children_) child->collect(pairs(values), out);
  }

 protected:
  Family(std::string name, std::string help, MetricType type, std::vector<std::string> label_names,
         std::function<std::unique_ptr<T>()> make)
      : FamilyBase(std::move(name), std::move(help), type, std::move(label_names)),
        make_(std::move(make)) {
    // A family without labels has exactly one series, exposed (at zero) from the start.
    if (this->label_names().empty()) unlabelled_ = &labels({});
  }

  // The single series of a family without labels.
  T& unlabelled() const {
    if (unlabelled_ == nullptr) throw_labelled();
    return *unlabelled_;
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::vector<std::string>, std::unique_ptr<T>> children_;
  std::function<std::unique_ptr<T>()> make_;
  T* unlabelled_ = nullptr;
};

class CounterFamily : public Family<Counter> {
 public:
  CounterFamily(std::string name, std::string help, std::vector<std::string> label_names);
  // Shortcuts for a family without labels (throw std::logic_error otherwise).
  void inc(double amount = 1.0) { unlabelled().inc(amount); }
  double value() const { return unlabelled().value(); }
};

class GaugeFamily : public Family<Gauge> {
 public:
  GaugeFamily(std::string name, std::string help, std::vector<std::string> label_names);
  void set(double v) { unlabelled().set(v); }
  void inc(double amount = 1.0) { unlabelled().inc(amount); }
  void dec(double amount = 1.0) { unlabelled().dec(amount); }
  double value() const { return unlabelled().value(); }
};

class HistogramFamily : public Family<Histogram> {
 public:
  HistogramFamily(std::string name, std::string help, std::vector<double> upper_bounds,
                  std::vector<std::string> label_names);
  void observe(double v) { unlabelled().observe(v); }
  Histogram::Snapshot snapshot() const { return unlabelled().snapshot(); }
  const std::vector<double>& upper_bounds() const { return upper_bounds_; }

 private:
  std::vector<double> upper_bounds_;
};

}  // namespace ddp3d::metrics
