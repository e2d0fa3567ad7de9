// Registry: the set of metric families one process exposes on /metrics.
//
//   ddp3d::metrics::Registry registry;
//   auto& steps = registry.counter("ddp3d_train_steps_total", "Optimizer steps done.");
//   steps.inc();
//   auto& loss = registry.gauge("ddp3d_train_loss", "Last loss.", {"term"});
//   loss.labels({"cls"}).set(0.7);
//   auto& t = registry.histogram("ddp3d_step_seconds", "Step time.", default_buckets());
//   t.observe(0.12);
//   std::string body = registry.expose();   // Prometheus text format 0.0.4
//
// Thread-safe. Families live as long as the registry; references to them stay valid.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/metrics/family.h"
#include "common/metrics/snapshot.h"

namespace ddp3d::metrics {

// Produces families whose values are read at scrape time (e.g. from /proc).
class Collector {
 public:
  virtual ~Collector() = default;
  virtual std::vector<FamilySnapshot> collect() const = 0;
};

class Registry {
 public:
  Registry() = default;
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // Each returns the family with this name, creating it on first call. Calling again with
  // the same name, type, help, label names (and buckets) returns the same family; any
  // difference throws std::invalid_argument naming the metric. Names are validated (see
  // names.h); help must be non-empty; counter names must end in "_total"; histograms may not
  // use the label "le".
  CounterFamily& counter(const std::string& name, const std::string& help,
                         const std::vector<std::string>& label_names = {});
  GaugeFamily& gauge(const std::string& name, const std::string& help,
                     const std::vector<std::string>& label_names = {});
  HistogramFamily& histogram(const std::string& name, const std::string& help,
                             const std::vector<double>& upper_bounds,
                             const std::vector<std::string>& label_names = {});

  // Adds a scrape-time collector. Its family names are checked against the registry's
  // (once, now) and reserved; a clash throws std::invalid_argument.
  void add_collector(std::shared_ptr<const Collector> collector);

  // All families, sorted by name; labelled families without any series are left out.
  std::vector<FamilySnapshot> collect() const;
  // collect() in Prometheus text exposition format 0.0.4 (see exposition.h).
  std::string expose() const;

 private:
  void reserve_name(const std::string& name, MetricType type);  // caller holds mutex_

  mutable std::mutex mutex_;
  std::map<std::string, std::unique_ptr<FamilyBase>> families_;
  std::vector<std::shared_ptr<const Collector>> collectors_;
  std::map<std::string, std::string> taken_names_;  // sample name -> family exposing it
};

}  // namespace ddp3d::metrics
