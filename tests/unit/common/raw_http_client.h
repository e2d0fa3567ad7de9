// A deliberately raw HTTP client for tests: plain sockets, bytes in and out, so tests see
// exactly what a server sends (and can send what no well-behaved client would).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>

namespace ddp3d::http::test {

// Connects to 127.0.0.1:port; throws std::runtime_error if nothing listens there.
int connect_loopback(std::uint16_t port);
// Sends as much of data as the peer accepts (stops quietly if the peer closes early).
void send_all(int fd, const std::string& data);
// Reads until the peer closes the connection or the limit passes.
std::string read_until_close(int fd, std::chrono::milliseconds limit = std::chrono::seconds(5));
// connect + send_all + read_until_close + close.
std::string raw_exchange(std::uint16_t port, const std::string& request);

struct Reply {
  int status = 0;
  std::map<std::string, std::string> headers;  // names as sent
  std::string body;
  std::string header(const std::string& name) const;  // "" if absent
};

// Splits an HTTP/1.1 response into status, headers and body (a test failure if it is not one).
Reply parse_reply(const std::string& raw);

}  // namespace ddp3d::http::test
