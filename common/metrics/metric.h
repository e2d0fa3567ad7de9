// The three metric kinds. Each object is one time series (one set of label values); all
// methods are thread-safe. Obtain them from a Registry family, never construct directly.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "common/metrics/snapshot.h"

namespace ddp3d::metrics {

// Monotonically increasing value (e.g. steps done, bytes sent). Names end in "_total".
class Counter {
 public:
  // Throws std::invalid_argument for a negative or NaN amount: a counter never goes down.
  void inc(double amount = 1.0);
  double value() const { return value_.load(std::memory_order_relaxed); }

  void collect(const LabelPairs& labels, std::vector<Sample>& out) const;

 private:
  std::atomic<double> value_{0.0};
};

// Value that goes up and down (e.g. learning rate, queue depth).
class Gauge {
 public:
  void set(double value) { value_.store(value, std::memory_order_relaxed); }
  void inc(double amount = 1.0) { value_.fetch_add(amount, std::memory_order_relaxed); }
  void dec(double amount = 1.0) { value_.fetch_sub(amount, std::memory_order_relaxed); }
  double value() const { return value_.load(std::memory_order_relaxed); }

  void collect(const LabelPairs& labels, std::vector<Sample>& out) const;

 private:
  std::atomic<double> value_{0.0};
};

// Distribution of observations over fixed upper bounds (e.g. step time in seconds).
class Histogram {
 public:
  // upper_bounds: strictly increasing finite values; +Inf is always implied (a trailing +Inf
  // is accepted and dropped). Throws std::invalid_argument otherwise.
  explicit Histogram(std::vector<double> upper_bounds);

  void observe(double value);

  struct Snapshot {
    std::vector<double> upper_bounds;       // without +Inf
    std::vector<std::uint64_t> cumulative;  // one per upper bound, then one for +Inf
    double sum = 0;
    std::uint64_t count = 0;
  };
  // A consistent copy: count == cumulative.back() always holds.
  Snapshot snapshot() const;

  const std::vector<double>& upper_bounds() const { return upper_bounds_; }

  void collect(const LabelPairs& labels, std::vector<Sample>& out) const;

 private:
  std::vector<double> upper_bounds_;
  mutable std::mutex mutex_;           // a histogram's buckets, sum and count change together
  std::vector<std::uint64_t> counts_;  // non-cumulative, size upper_bounds_ + 1
  double sum_ = 0;
};

// Prometheus client defaults: .005 .01 .025 .05 .1 .25 .5 1 2.5 5 10 (seconds).
std::vector<double> default_buckets();
// start, start+width, ... (count values). Throws for count < 1 or width <= 0.
std::vector<double> linear_buckets(double start, double width, int count);
// start, start*factor, ... (count values). Throws for count < 1, start <= 0 or factor <= 1.
std::vector<double> exponential_buckets(double start, double factor, int count);

}  // namespace ddp3d::metrics
