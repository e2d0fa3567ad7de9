#include "worker/telemetry/worker_metrics.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <charconv>
#include <stdexcept>

#include "common/http/metrics_server.h"
#include "common/metrics/collection.h"
#include "common/metrics/process_collector.h"

namespace ddp3d::telemetry {
namespace {

constexpr std::int64_t kMaxPort = 65535;

std::int64_t parse_port(const std::string& origin, const std::string& text) {
  std::int64_t v = -1;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || ptr != end || v < 0 || v > kMaxPort) {
    throw std::invalid_argument(origin + ": '" + text + "' is not a port number (0-65535)");
  }
  return v;
}

}  // namespace

MetricsEndpointSettings resolve_metrics_endpoint(const std::optional<std::string>& env_port,
                                                 std::optional<std::int64_t> config_port,
                                                 int local_rank, int rank, const std::string& job) {
  MetricsEndpointSettings s;
  s.labels.job_name = job.empty() ? "local" : job;
  s.labels.rank = std::to_string(rank);
  std::int64_t base = 0;
  if (env_port) {
    s.origin = "DDP3D_METRICS_PORT=" + *env_port;
    base = parse_port("DDP3D_METRICS_PORT", *env_port);
  } else if (config_port) {
    s.origin = "env_cfg.metrics_port=" + std::to_string(*config_port);
    if (*config_port < 0 || *config_port > kMaxPort) {
      throw std::invalid_argument("env_cfg.metrics_port: " + std::to_string(*config_port) +
                                  " is not a port number (0-65535)");
    }
    base = *config_port;
  } else {
    return s;  // disabled
  }
  s.enabled = true;
  if (base == 0) return s;  // every rank asks the kernel for its own
  const std::int64_t port = base + local_rank;
  if (port > kMaxPort) {
    throw std::invalid_argument(s.origin + ": port " + std::to_string(base) + " + LOCAL_RANK " +
                                std::to_string(local_rank) + " is past 65535");
  }
  s.port = static_cast<std::uint16_t>(port);
  return s;
}

std::string resolve_metrics_address(const std::optional<std::string>& env_address) {
  if (!env_address) return MetricsEndpointSettings{}.address;  // all interfaces
  in_addr parsed{};
  if (::inet_pton(AF_INET, env_address->c_str(), &parsed) != 1) {
    throw std::invalid_argument("DDP3D_METRICS_ADDRESS: '" + *env_address +
                                "' is not an IPv4 address (e.g. 127.0.0.1 or 0.0.0.0)");
  }
  return *env_address;
}

WorkerMetrics::WorkerMetrics(const MetricsEndpointSettings& settings)
    : metrics_(std::make_unique<metrics::Collection>()) {
  metrics_->add(std::make_shared<metrics::ProcessCollector>());
  telemetry_ = std::make_unique<PrometheusTrainTelemetry>(metrics_->registry(), settings.labels);
  http::ServerOptions so;
  so.address = settings.address;
  so.port = settings.port;
  server_ = std::make_unique<http::MetricsServer>(*metrics_, so);
  try {
    server_->start();
  } catch (const std::exception& e) {
    throw std::runtime_error("metrics endpoint (" + settings.origin + "): cannot serve on " +
                             settings.address + ":" + std::to_string(settings.port) + ": " +
                             e.what());
  }
}

WorkerMetrics::~WorkerMetrics() = default;

std::uint16_t WorkerMetrics::port() const {
  return server_->port();
}

void WorkerMetrics::set_ready(bool ready) {
  server_->set_ready(ready);
}

}  // namespace ddp3d::telemetry
