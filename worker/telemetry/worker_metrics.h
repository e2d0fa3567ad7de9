// The worker's /metrics endpoint: where it listens (resolved from the environment contract and
// the config, pure and tested) and the process-lifetime object that serves it.
//
// One endpoint per rank process, on port base + LOCAL_RANK: each rank owns its counters, so no
// process has to collect the others' (a rank that hangs is seen hanging, not averaged away).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "worker/telemetry/prometheus_telemetry.h"

namespace ddp3d::http {
class MetricsServer;
}
namespace ddp3d::metrics {
class Collection;
}

namespace ddp3d::telemetry {

struct MetricsEndpointSettings {
  bool enabled = false;
  std::string address = "0.0.0.0";
  std::uint16_t port = 0;  // base + LOCAL_RANK; 0: the kernel picks one (logged)
  std::string origin;      // what asked for it, for messages: "DDP3D_METRICS_PORT=9400"
  TelemetryLabels labels;
};

// `env_port`: DDP3D_METRICS_PORT (wins: the operator sets it on every pod); `config_port`:
// env_cfg.metrics_port (null: none). Neither: disabled. `job`: DDP3D_JOB (empty: "local").
// Throws std::invalid_argument naming the variable or key when the port is not an integer in
// 0..65535 or base + local_rank passes 65535.
MetricsEndpointSettings resolve_metrics_endpoint(const std::optional<std::string>& env_port,
                                                 std::optional<std::int64_t> config_port,
                                                 int local_rank, int rank, const std::string& job);

// The address every rank's endpoint binds: DDP3D_METRICS_ADDRESS (an IPv4 address, e.g.
// 127.0.0.1 on a shared host so that only local scrapers reach it), else 0.0.0.0. Throws
// std::invalid_argument naming the variable when it is not one.
std::string resolve_metrics_address(const std::optional<std::string>& env_address);

// Owns the metrics (process_* and the training families), the telemetry and the HTTP server.
// The server runs its own threads: a slow or stuck scraper holds one of them, never the
// training loop, which only updates atomics.
class WorkerMetrics {
 public:
  // Binds and starts serving. Throws std::runtime_error naming address, port and origin when
  // the port cannot be bound: the port was asked for explicitly, so training without the
  // metrics it promised would hide a misconfiguration.
  explicit WorkerMetrics(const MetricsEndpointSettings& settings);
  ~WorkerMetrics();
  WorkerMetrics(const WorkerMetrics&) = delete;
  WorkerMetrics& operator=(const WorkerMetrics&) = delete;

  engine::TrainTelemetry& telemetry() { return *telemetry_; }
  std::uint16_t port() const;  // the bound port
  void set_ready(bool ready);  // /readyz

 private:
  std::unique_ptr<metrics::Collection> metrics_;
  std::unique_ptr<PrometheusTrainTelemetry> telemetry_;
  std::unique_ptr<http::MetricsServer> server_;
};

}  // namespace ddp3d::telemetry
