#include "common/metrics/metric.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "common/metrics/exposition.h"

namespace ddp3d::metrics {

void Counter::inc(double amount) {
  // !(amount >= 0) also catches NaN, which would poison the counter forever.
  if (!(amount >= 0)) {
    throw std::invalid_argument("counter increment must be >= 0, got " + format_value(amount));
  }
  value_.fetch_add(amount, std::memory_order_relaxed);
}

void Counter::collect(const LabelPairs& labels, std::vector<Sample>& out) const {
  out.push_back({"", labels, value()});
}

void Gauge::collect(const LabelPairs& labels, std::vector<Sample>& out) const {
  out.push_back({"", labels, value()});
}

Histogram::Histogram(std::vector<double> upper_bounds) : upper_bounds_(std::move(upper_bounds)) {
  if (!upper_bounds_.empty() && upper_bounds_.back() == std::numeric_limits<double>::infinity()) {
    upper_bounds_.pop_back();
  }
  for (std::size_t i = 0; i < upper_bounds_.size(); ++i) {
    const double b = upper_bounds_[i];
    if (!std::isfinite(b)) {
      throw std::invalid_argument("histogram bucket bound " + format_value(b) +
                                  " is not finite (+Inf is implied)");
    }
    if (i > 0 && !(upper_bounds_[i - 1] < b)) {
      throw std::invalid_argument("histogram bucket bounds must be strictly increasing: " +
                                  format_value(upper_bounds_[i - 1]) + " then " + format_value(b));
    }
  }
  counts_.assign(upper_bounds_.size() + 1, 0);
}

void Histogram::observe(double value) {
  // First bucket whose upper bound is >= value ("le" is inclusive); NaN lands in +Inf.
  const auto it = std::lower_bound(upper_bounds_.begin(), upper_bounds_.end(), value);
  const std::size_t index = std::isnan(value)
                                ? upper_bounds_.size()
                                : static_cast<std::size_t>(it - upper_bounds_.begin());
  std::lock_guard lock(mutex_);
  ++counts_[index];
  sum_ += value;
}

Histogram::Snapshot Histogram::snapshot() const {
  Snapshot s;
  s.upper_bounds = upper_bounds_;
  std::lock_guard lock(mutex_);
  s.cumulative.reserve(counts_.size());
  std::uint64_t running = 0;
  for (const auto c : counts_) {
    running += c;
    s.cumulative.push_back(running);
  }
  s.sum = sum_;
  s.count = running;
  return s;
}

void Histogram::collect(const LabelPairs& labels, std::vector<Sample>& out) const {
  const Snapshot s = snapshot();
  for (std::size_t i = 0; i < s.cumulative.size(); ++i) {
    LabelPairs with_le = labels;
    with_le.emplace_back(
        "le", i < s.upper_bounds.size() ? format_value(s.upper_bounds[i]) : std::string("+Inf"));
    out.push_back({"_bucket", std::move(with_le), static_cast<double>(s.cumulative[i])});
  }
  out.push_back({"_sum", labels, s.sum});
  out.push_back({"_count", labels, static_cast<double>(s.count)});
}

std::vector<double> default_buckets() {
  return {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
}

std::vector<double> linear_buckets(double start, double width, int count) {
  if (count < 1) throw std::invalid_argument("linear_buckets: count must be >= 1");
  if (!(width > 0)) throw std::invalid_argument("linear_buckets: width must be > 0");
  std::vector<double> out;
  out.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) out.push_back(start + width * i);
  return out;
}

std::vector<double> exponential_buckets(double start, double factor, int count) {
  if (count < 1) throw std::invalid_argument("exponential_buckets: count must be >= 1");
  if (!(start > 0)) throw std::invalid_argument("exponential_buckets: start must be > 0");
  if (!(factor > 1)) throw std::invalid_argument("exponential_buckets: factor must be > 1");
  std::vector<double> out;
  out.reserve(static_cast<std::size_t>(count));
  double v = start;
  for (int i = 0; i < count; ++i, v *= factor) out.push_back(v);
  return out;
}

}  // namespace ddp3d::metrics
