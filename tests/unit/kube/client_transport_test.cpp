// Transport failures end requests with TransportError instead of blocking: a refused
// connection, and a peer that accepts the connection but never answers.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>

#include "operator/kube/client.h"
#include "operator/kube/errors.h"

namespace ddp3d::kube {
namespace {

using namespace std::chrono_literals;

// A listening loopback socket that is never read from: connections complete (backlog) but no
// byte ever comes back, which is what a hung server looks like.
class SilentPeer {
 public:
  SilentPeer() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(::listen(fd_, 16), 0);
    socklen_t len = sizeof addr;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
  }
  ~SilentPeer() { ::close(fd_); }
  int port() const { return port_; }
  // Closing the listener makes later connects fail with "connection refused".
  void close_now() {
    ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
  int port_ = 0;
};

Config config_for(int port, bool tls) {
  Config c;
  c.server = std::string(tls ? "https" : "http") + "://127.0.0.1:" + std::to_string(port);
  c.origin = "test";
  c.request_timeout = 300ms;
  return c;
}

TEST(ClientTransport, RefusedConnectionIsATransportError) {
  int port;
  {
    SilentPeer peer;
    port = peer.port();
    peer.close_now();
  }
  Client client(config_for(port, false));
  try {
    client.get(resources::pods(), "ns", "p");
    FAIL();
  } catch (const TransportError& e) {
    EXPECT_NE(std::string(e.what()).find("/api/v1/namespaces/ns/pods/p"), std::string::npos)
        << e.what();
  }
}

TEST(ClientTransport, SilentServerTimesOut) {
  SilentPeer peer;
  for (bool tls : {false, true}) {
    Client client(config_for(peer.port(), tls));
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_THROW(client.list(resources::config_maps(), "ns"), TransportError) << "tls=" << tls;
    // cpprest's timeout (300 ms) or, at the latest, the client's backstop (+5 s).
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 6s) << "tls=" << tls;
  }
}

}  // namespace
}  // namespace ddp3d::kube
