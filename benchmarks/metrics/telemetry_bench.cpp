// What the worker's Prometheus metrics cost the training path: nanoseconds per on_step (the
// call the train loop makes every iteration) and milliseconds per /metrics scrape, through the
// same WorkerMetrics object a rank owns, HTTP server included. benchmarks/metrics/run builds it
// from two trees and runs them side by side.
//
//   telemetry_bench [--steps N] [--scrapes N]
//   -> RESULT telemetry ns_per_step=<x> ms_per_scrape=<y> scrape_bytes=<z>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "worker/telemetry/worker_metrics.h"

namespace {

using Clock = std::chrono::steady_clock;

std::string get_metrics(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("socket failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    throw std::runtime_error("connect failed");
  }
  const std::string req = "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  if (::send(fd, req.data(), req.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(req.size())) {
    ::close(fd);
    throw std::runtime_error("send failed");
  }
  std::string reply;
  char buf[65536];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) reply.append(buf, n);
  ::close(fd);
  if (reply.rfind("HTTP/1.1 200", 0) != 0) throw std::runtime_error("scrape failed: " + reply);
  return reply;
}

long arg_or(int argc, char** argv, const char* name, long fallback) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], name) == 0) return std::strtol(argv[i + 1], nullptr, 10);
  }
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  const long steps = arg_or(argc, argv, "--steps", 2'000'000);
  const long scrapes = arg_or(argc, argv, "--scrapes", 2000);
  ddp3d::telemetry::MetricsEndpointSettings settings;
  settings.enabled = true;
  settings.address = "127.0.0.1";
  settings.labels = {"bench", "0"};
  ddp3d::telemetry::WorkerMetrics metrics(settings);
  ddp3d::engine::TrainTelemetry& telemetry = metrics.telemetry();

  ddp3d::engine::StepRecord r;
  r.epoch = 1;
  r.samples = 4;
  r.lr = 0.001;
  const auto t0 = Clock::now();
  for (long i = 0; i < steps; ++i) {
    // Step and all-reduce times spread over the buckets, as a real run's are.
    r.step_seconds = 0.01 * static_cast<double>(i % 64);
    if (i % 2 == 0) {
      r.allreduce_seconds = 0.0005 * static_cast<double>(i % 32);
    } else {
      r.allreduce_seconds.reset();
    }
    telemetry.on_step(r);
    if (i % 50 == 0) telemetry.on_loss(1.0 / static_cast<double>(i + 1));
  }
  const auto t1 = Clock::now();
  std::size_t bytes = 0;
  for (long i = 0; i < scrapes; ++i) bytes = get_metrics(metrics.port()).size();
  const auto t2 = Clock::now();
  const double ns_per_step =
      std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(steps);
  const double ms_per_scrape =
      std::chrono::duration<double, std::milli>(t2 - t1).count() / static_cast<double>(scrapes);
  std::printf("RESULT telemetry ns_per_step=%.1f ms_per_scrape=%.3f scrape_bytes=%zu\n",
              ns_per_step, ms_per_scrape, bytes);
  return 0;
}
