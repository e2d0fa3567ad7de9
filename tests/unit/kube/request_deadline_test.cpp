// A scoped deadline bounds the requests of its thread only, nests by keeping the earlier
// one, and makes a request to a silent server end at it rather than at the request timeout.
#include "operator/kube/request_deadline.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include "operator/kube/client.h"
#include "operator/kube/errors.h"

namespace ddp3d::kube {
namespace {

using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

TEST(ScopedRequestDeadline, NestsAndIsPerThread) {
  EXPECT_FALSE(ScopedRequestDeadline::current());
  const auto now = SteadyClock::now();
  {
    ScopedRequestDeadline outer(now + 5s);
    EXPECT_EQ(ScopedRequestDeadline::current(), now + 5s);
    {
      ScopedRequestDeadline later(now + 9s);
      EXPECT_EQ(ScopedRequestDeadline::current(), now + 5s) << "the earlier deadline stays";
      ScopedRequestDeadline earlier(now + 1s);
      EXPECT_EQ(ScopedRequestDeadline::current(), now + 1s);
    }
    EXPECT_EQ(ScopedRequestDeadline::current(), now + 5s);
    std::thread([] { EXPECT_FALSE(ScopedRequestDeadline::current()); }).join();
    EXPECT_LE(request_deadline(1h), now + 5s);
    EXPECT_GE(request_deadline(1ms), now);
  }
  EXPECT_FALSE(ScopedRequestDeadline::current());
}

// Accepts connections (the kernel does, from the backlog) and never answers.
class SilentPeer {
 public:
  SilentPeer() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(::listen(fd_, 16), 0);
    socklen_t len = sizeof addr;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
  }
  ~SilentPeer() {
    if (conn_ >= 0) ::close(conn_);
    ::close(fd_);
  }
  int port() const { return port_; }
  // Waits up to `timeout` for a client to connect and takes the connection (still silent).
  bool wait_for_connection(std::chrono::milliseconds timeout) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(timeout.count())) != 1) return false;
    conn_ = ::accept(fd_, nullptr, nullptr);
    return conn_ >= 0;
  }

 private:
  int fd_ = -1;
  int conn_ = -1;
  int port_ = 0;
};

Config silent_config(const SilentPeer& peer) {
  Config c;
  c.server = "http://127.0.0.1:" + std::to_string(peer.port());
  c.origin = "test";
  c.request_timeout = 60s;  // far beyond the deadlines below: only they can end the requests
  return c;
}

TEST(ScopedRequestDeadline, EndsARequestToASilentServerAtTheDeadline) {
  SilentPeer peer;
  Client client(silent_config(peer));
  const auto t0 = SteadyClock::now();
  {
    ScopedRequestDeadline deadline(t0 + 300ms);
    EXPECT_THROW(client.get(resources::leases(), "ns", "l"), TransportError);
  }
  const auto took = SteadyClock::now() - t0;
  EXPECT_GE(took, 300ms);
  EXPECT_LT(took, 3s);
  // Past the deadline a request is not even sent.
  ScopedRequestDeadline passed(SteadyClock::now() - 1ms);
  try {
    client.get(resources::leases(), "ns", "l");
    FAIL();
  } catch (const TransportError& e) {
    EXPECT_NE(std::string(e.what()).find("deadline has passed"), std::string::npos) << e.what();
  }
}

TEST(ClientAbort, FailsRequestsInFlightAtOnceAndLaterOnesUnsent) {
  SilentPeer peer;
  Client client(silent_config(peer));
  std::string error;
  std::thread stuck([&] {
    try {
      client.get(resources::pods(), "ns", "p");
    } catch (const TransportError& e) {
      error = e.what();
    }
  });
  // The request is registered before it connects, so once the peer sees the connection
  // abort() has a request in flight to end.
  EXPECT_TRUE(peer.wait_for_connection(10s));
  const auto t0 = SteadyClock::now();
  client.abort("leadership lost");
  stuck.join();
  EXPECT_LT(SteadyClock::now() - t0, 2s);
  EXPECT_NE(error.find("shut off (leadership lost)"), std::string::npos) << error;
  try {
    client.list(resources::pods(), "ns");
    FAIL() << "a request after abort() was sent";
  } catch (const TransportError& e) {
    EXPECT_NE(std::string(e.what()).find("not sent, the client was shut off (leadership lost)"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace ddp3d::kube
