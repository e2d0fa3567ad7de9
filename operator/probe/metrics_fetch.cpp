#include "operator/probe/metrics_fetch.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/io/unique_fd.h"

namespace ddp3d::op::probe {

namespace {

using io::UniqueFd;

using Clock = std::chrono::steady_clock;

// Response headers allowed on top of the body limit.
constexpr std::size_t kMaxHeaderBytes = std::size_t{64} * 1024;

std::string errno_text(const char* what, int err) {
  return std::string(what) + ": " + std::strerror(err);
}

// Waits for `events` on fd until `deadline`; "" when ready, else why not.
std::string wait_for(int fd, short events, Clock::time_point deadline,
                     std::chrono::milliseconds timeout) {
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return "timed out after " + std::to_string(timeout.count()) + " ms";
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, static_cast<int>(left.count()) + 1);
    if (n > 0) return "";
    if (n < 0 && errno != EINTR) return errno_text("poll", errno);
  }
}

}  // namespace

HttpBody fetch_metrics(const std::string& host, int port, const FetchLimits& limits) {
  const auto deadline = Clock::now() + limits.timeout;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;  // a pod IP: never a DNS lookup
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (const int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0) {
    return {"bad address " + host + ": " + ::gai_strerror(rc), ""};
  }
  const int family = found->ai_family;
  sockaddr_storage addr{};
  const socklen_t addr_len = found->ai_addrlen;
  std::memcpy(&addr, found->ai_addr, addr_len);
  ::freeaddrinfo(found);

  const UniqueFd fd(::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) return {errno_text("socket", errno), ""};
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), addr_len) != 0) {
    if (errno != EINPROGRESS) return {errno_text("connect", errno), ""};
    if (auto e = wait_for(fd.get(), POLLOUT, deadline, limits.timeout); !e.empty()) {
      return {"connect: " + e, ""};
    }
    int err = 0;
    socklen_t len = sizeof err;
    ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) return {errno_text("connect", err), ""};
  }
  const std::string request =
      "GET /metrics HTTP/1.0\r\nHost: " + (family == AF_INET6 ? "[" + host + "]" : host) + ":" +
      service + "\r\nAccept: text/plain\r\nConnection: close\r\n\r\n";
  size_t sent = 0;
  while (sent < request.size()) {
    const ssize_t n = ::send(fd.get(), request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EINTR) return {errno_text("send", errno), ""};
    if (auto e = wait_for(fd.get(), POLLOUT, deadline, limits.timeout); !e.empty()) {
      return {"send: " + e, ""};
    }
  }
  const size_t cap = limits.max_body_bytes + kMaxHeaderBytes;
  std::string raw;
  char buf[16384];
  for (;;) {
    const ssize_t n = ::recv(fd.get(), buf, sizeof buf, 0);
    if (n > 0) {
      raw.append(buf, static_cast<size_t>(n));
      if (raw.size() > cap) {
        return {"response over " + std::to_string(limits.max_body_bytes) + " bytes", ""};
      }
      continue;
    }
    if (n == 0) break;
    if (errno != EAGAIN && errno != EINTR) return {errno_text("recv", errno), ""};
    if (auto e = wait_for(fd.get(), POLLIN, deadline, limits.timeout); !e.empty()) {
      return {"read: " + e, ""};
    }
  }
  return parse_http_response(raw, limits.max_body_bytes);
}

}  // namespace ddp3d::op::probe
