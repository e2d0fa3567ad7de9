// fetch_metrics against real sockets on 127.0.0.1: a server that answers, one that accepts and
// never answers, one that floods, and a port nobody listens on. Each ends within its bound.
#include "operator/probe/metrics_fetch.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <string>
#include <thread>

namespace ddp3d::op::probe {
namespace {

// A listening socket on 127.0.0.1; `serve` runs on the accepted connection in a thread.
class LocalServer {
 public:
  explicit LocalServer(std::function<void(int fd)> serve) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    EXPECT_EQ(::listen(fd_, 4), 0);
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this, serve = std::move(serve)] {
      const int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      serve(c);
      ::close(c);
    });
  }
  ~LocalServer() {
    ::shutdown(fd_, SHUT_RDWR);  // ends an accept() still waiting
    thread_.join();
    ::close(fd_);
  }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
};

void write_all(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    const ssize_t n = ::send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return;
    off += static_cast<size_t>(n);
  }
}

// Reads the request up to its blank line.
std::string read_request(int fd) {
  std::string req;
  char buf[512];
  while (req.find("\r\n\r\n") == std::string::npos) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    req.append(buf, static_cast<size_t>(n));
  }
  return req;
}

TEST(FetchMetrics, ReadsTheBodyOfA200) {
  std::string request;
  LocalServer server([&](int fd) {
    request = read_request(fd);
    write_all(fd, "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nddp3d_train_steps_total 7\n");
  });
  const auto got = fetch_metrics("127.0.0.1", server.port(), {});
  EXPECT_EQ(got.error, "");
  EXPECT_EQ(got.body, "ddp3d_train_steps_total 7\n");
  EXPECT_EQ(request.rfind("GET /metrics HTTP/1.0\r\n", 0), 0U) << request;
}

TEST(FetchMetrics, ASilentServerTimesOutWithinTheLimit) {
  LocalServer server([](int fd) {
    read_request(fd);
    // Holds the connection open, answering nothing, until the client gives up (EOF).
    char c;
    while (::recv(fd, &c, 1, 0) > 0) {
    }
  });
  FetchLimits limits;
  limits.timeout = std::chrono::milliseconds(300);
  const auto t0 = std::chrono::steady_clock::now();
  const auto got = fetch_metrics("127.0.0.1", server.port(), limits);
  const auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(got.error, "read: timed out after 300 ms");
  EXPECT_LT(took, std::chrono::seconds(2));
  EXPECT_GE(took, std::chrono::milliseconds(300));
}

TEST(FetchMetrics, AFloodIsCutAtTheBodyLimit) {
  LocalServer server([&](int fd) {
    read_request(fd);
    write_all(fd, "HTTP/1.0 200 OK\r\n\r\n");
    const std::string chunk(64 * 1024, 'x');
    for (int i = 0; i < 64; ++i) write_all(fd, chunk);  // 4 MiB, or until the client hangs up
  });
  FetchLimits limits;
  limits.max_body_bytes = 256 * 1024;
  const auto got = fetch_metrics("127.0.0.1", server.port(), limits);
  EXPECT_EQ(got.error, "response over 262144 bytes");
  EXPECT_TRUE(got.body.empty());
}

TEST(FetchMetrics, RefusedAndBadAddressesAreNamed) {
  int port = 0;
  {
    LocalServer closed([](int) {});
    port = closed.port();
  }  // nobody listens there any more
  EXPECT_EQ(fetch_metrics("127.0.0.1", port, {}).error, "connect: Connection refused");
  EXPECT_EQ(fetch_metrics("not-an-ip", 80, {}).error.rfind("bad address not-an-ip", 0), 0U);
}

}  // namespace
}  // namespace ddp3d::op::probe
