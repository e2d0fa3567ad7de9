// The observability endpoint every ddp3d process runs: /metrics (a metrics::Collection in
// Prometheus text format), /healthz (liveness: 200 while the process serves HTTP) and /readyz
// (readiness: 200 or 503 from a settable flag or callback).
//
//   ddp3d::metrics::Collection metrics;
//   metrics.add(std::make_shared<ddp3d::metrics::ProcessCollector>());
//   ddp3d::http::MetricsServer endpoint(metrics, {.port = 9100});
//   endpoint.start();
//   endpoint.set_ready(true);
#pragma once

#include <atomic>
#include <functional>
#include <mutex>

#include "common/http/server.h"
#include "common/metrics/collection.h"

namespace ddp3d::http {

class MetricsServer {
 public:
  // The collection must outlive this object.
  MetricsServer(const metrics::Collection& metrics, ServerOptions options = {});

  void start() { server_.start(); }
  void stop() { server_.stop(); }
  std::uint16_t port() const { return server_.port(); }

  // Readiness is false until set. A callback, when set, replaces the flag.
  void set_ready(bool ready);
  void set_readiness(std::function<bool()> check);
  bool ready() const;

  // For adding more handlers (e.g. a debug page).
  Server& server() { return server_; }

 private:
  const metrics::Collection& metrics_;
  std::atomic<bool> ready_{false};
  mutable std::mutex check_mutex_;
  std::function<bool()> check_;
  Server server_;
};

}  // namespace ddp3d::http
