// GET /metrics from a pod, bounded: one connection, HTTP/1.0, a deadline over the whole
// exchange (connect, send, read) and a cap on what is read, so a pod that stalls, trickles
// or floods cannot hold the progress probe or its memory. Never throws.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "operator/probe/http_response.h"

namespace ddp3d::op::probe {

struct FetchLimits {
  std::chrono::milliseconds timeout{2000};
  std::size_t max_body_bytes = std::size_t{1} << 20;  // 1 MiB
};

// `host` is a numeric IPv4 or IPv6 address (a pod IP). HttpBody::error names what failed:
// "connect: Connection refused", "timed out after 2000 ms", "HTTP 404", ...
HttpBody fetch_metrics(const std::string& host, int port, const FetchLimits& limits);

}  // namespace ddp3d::op::probe
