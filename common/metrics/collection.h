// Collection: everything one process exposes on /metrics. The metrics themselves are
// prometheus-cpp's (Debian's prometheus-cpp-dev: Registry, Family, Counter, Gauge, Histogram);
// this adds the scrape-time sources (process_*, gauges read from a cache) beside the registry
// and renders the whole set with prometheus-cpp's TextSerializer.
//
//   ddp3d::metrics::Collection metrics;
//   auto& steps = prometheus::BuildCounter().Name("ddp3d_train_steps_total")
//                     .Help("Optimizer steps done.").Register(metrics.registry()).Add({});
//   steps.Increment();
//   metrics.add(std::make_shared<ddp3d::metrics::ProcessCollector>());
//   std::string body = metrics.text();   // Prometheus text format 0.0.4
//
// Thread-safe: families are prometheus-cpp's (thread-safe); the source list is fixed before
// serving starts (add() is for set-up).
#pragma once

#include <prometheus/collectable.h>
#include <prometheus/registry.h>

#include <memory>
#include <string>
#include <vector>

namespace ddp3d::metrics {

// The Content-Type of text() (Prometheus text exposition format 0.0.4).
inline constexpr const char* kTextContentType = "text/plain; version=0.0.4; charset=utf-8";

class Collection {
 public:
  // Registering a family again with the same name, help and constant labels returns the
  // existing one (prometheus-cpp's InsertBehavior::Merge: e.g. two ranks' telemetry in one
  // test process); the same name for another metric type throws std::invalid_argument, so a
  // clash fails at start, not as a garbled scrape.
  Collection();
  Collection(const Collection&) = delete;
  Collection& operator=(const Collection&) = delete;

  prometheus::Registry& registry() { return *registry_; }

  // Adds a scrape-time source. Its family names are checked once, now, against the registry's
  // and the other sources': a clash throws std::invalid_argument naming the family.
  void add(std::shared_ptr<const prometheus::Collectable> source);

  // Every family of the registry and the sources, sorted by name; families without a sample (a
  // labelled family with no series yet) are left out.
  std::vector<prometheus::MetricFamily> collect() const;
  // collect() in the text exposition format.
  std::string text() const;

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  std::vector<std::shared_ptr<const prometheus::Collectable>> sources_;
};

// Bucket upper bounds start, start*factor, ... (count values). Throws std::invalid_argument
// for count < 1, start <= 0 or factor <= 1 (prometheus-cpp has no such helper).
std::vector<double> exponential_buckets(double start, double factor, int count);

}  // namespace ddp3d::metrics
