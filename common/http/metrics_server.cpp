#include "common/http/metrics_server.h"

namespace ddp3d::http {

MetricsServer::MetricsServer(const metrics::Collection& metrics, ServerOptions options)
    : metrics_(metrics), server_(std::move(options)) {
  server_.handle("/metrics", [this](const Request&) {
    return Response{200, metrics::kTextContentType, metrics_.text()};
  });
  // Liveness: answering at all is the signal.
  server_.handle("/healthz", [](const Request&) {
    return Response{200, "text/plain; charset=utf-8", "ok\n"};
  });
  server_.handle("/readyz", [this](const Request&) {
    return ready() ? Response{200, "text/plain; charset=utf-8", "ready\n"}
                   : Response{503, "text/plain; charset=utf-8", "not ready\n"};
  });
}

void MetricsServer::set_ready(bool ready) {
  ready_ = ready;
}

void MetricsServer::set_readiness(std::function<bool()> check) {
  std::lock_guard lock(check_mutex_);
  check_ = std::move(check);
}

bool MetricsServer::ready() const {
  std::function<bool()> check;
  {
    std::lock_guard lock(check_mutex_);
    check = check_;
  }
  return check ? check() : ready_.load();
}

}  // namespace ddp3d::http
