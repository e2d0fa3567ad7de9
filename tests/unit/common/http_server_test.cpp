// The HTTP server over real loopback sockets, driven by a raw client so every byte the server
// sends (status line, headers, body) is checked as a scraper or kubelet would see it.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <prometheus/counter.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/http/metrics_server.h"
#include "common/http/server.h"
#include "common/metrics/collection.h"
#include "tests/unit/common/raw_http_client.h"

namespace ddp3d::http {
namespace {

using Clock = std::chrono::steady_clock;
using namespace ddp3d::http::test;

Reply get(std::uint16_t port, const std::string& path, const std::string& method = "GET") {
  return parse_reply(
      raw_exchange(port, method + " " + path + " HTTP/1.1\r\nHost: localhost\r\n\r\n"));
}

class MetricsServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    prometheus::BuildCounter()
        .Name("ddp3d_test_requests_total")
        .Help("Requests.")
        .Register(metrics_.registry())
        .Add({{"code", "200"}})
        .Increment(3);
    server_.start();
    ASSERT_NE(server_.port(), 0);
  }

  metrics::Collection metrics_;
  MetricsServer server_{metrics_, {.address = "127.0.0.1", .port = 0}};
};

TEST_F(MetricsServerTest, MetricsServesTheRegistryInTextFormat) {
  const Reply r = get(server_.port(), "/metrics");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.header("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(r.header("Connection"), "close");
  EXPECT_EQ(r.header("Content-Length"), std::to_string(r.body.size()));
  EXPECT_EQ(r.body, metrics_.text());
  EXPECT_NE(r.body.find("ddp3d_test_requests_total{code=\"200\"} 3\n"), std::string::npos);
  // The query string does not change routing.
  EXPECT_EQ(get(server_.port(), "/metrics?debug=1").status, 200);
}

TEST_F(MetricsServerTest, HeadSendsHeadersOnly) {
  const Reply r = get(server_.port(), "/metrics", "HEAD");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.header("Content-Length"), std::to_string(metrics_.text().size()));
  EXPECT_TRUE(r.body.empty());
}

TEST_F(MetricsServerTest, HealthAndReadiness) {
  const Reply health = get(server_.port(), "/healthz");
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(health.body, "ok\n");

  EXPECT_EQ(get(server_.port(), "/readyz").status, 503);
  server_.set_ready(true);
  const Reply ready = get(server_.port(), "/readyz");
  EXPECT_EQ(ready.status, 200);
  EXPECT_EQ(ready.body, "ready\n");

  std::atomic<bool> flag{false};
  server_.set_readiness([&] { return flag.load(); });
  EXPECT_EQ(get(server_.port(), "/readyz").status, 503);
  flag = true;
  EXPECT_EQ(get(server_.port(), "/readyz").status, 200);
}

TEST_F(MetricsServerTest, UnknownPathAndWrongMethod) {
  EXPECT_EQ(get(server_.port(), "/nope").status, 404);
  EXPECT_EQ(get(server_.port(), "/metrics/").status, 404);  // exact match only
  const Reply post = get(server_.port(), "/metrics", "POST");
  EXPECT_EQ(post.status, 405);
  EXPECT_EQ(post.header("Allow"), "GET, HEAD");
}

TEST_F(MetricsServerTest, MalformedRequestsGetClientErrors) {
  EXPECT_EQ(parse_reply(raw_exchange(server_.port(), "garbage\r\n\r\n")).status, 400);
  EXPECT_EQ(parse_reply(raw_exchange(server_.port(), "GET /metrics HTTP/1.1\r\n\r\n")).status,
            400);  // no Host
  EXPECT_EQ(
      parse_reply(raw_exchange(server_.port(), "GET /metrics HTTP/3.0\r\nHost: x\r\n\r\n")).status,
      505);
  // Binary junk with a blank line.
  EXPECT_EQ(parse_reply(raw_exchange(server_.port(), std::string("\x01\x02\xff\r\n\r\n"))).status,
            400);
  // A head larger than the limit (16 KiB) is refused without reading it all.
  const std::string huge =
      "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(std::size_t{64} * 1024, 'a') +
      "\r\n\r\n";
  EXPECT_EQ(parse_reply(raw_exchange(server_.port(), huge)).status, 431);
  // A client that connects and leaves does not disturb the server.
  ::close(connect_loopback(server_.port()));
  EXPECT_EQ(get(server_.port(), "/healthz").status, 200);
}

TEST_F(MetricsServerTest, RandomGarbageGetsAnErrorAndTheServerSurvives) {
  std::mt19937 rng(777);
  for (int i = 0; i < 30; ++i) {
    std::string junk;
    const int len = 1 + static_cast<int>(rng() % 200);
    for (int k = 0; k < len; ++k) {
      junk += static_cast<char>(rng() % 256);
    }
    const std::string raw = raw_exchange(server_.port(), junk + "\r\n\r\n");
    const Reply r = parse_reply(raw);
    EXPECT_TRUE(r.status == 400 || r.status == 505) << r.status;
  }
  EXPECT_EQ(get(server_.port(), "/healthz").status, 200);
}

TEST_F(MetricsServerTest, ManyConcurrentClients) {
  std::atomic<int> ok{0};
  std::vector<std::thread> clients;
  clients.reserve(16);
  for (int i = 0; i < 16; ++i) {
    clients.emplace_back([&] {
      for (int j = 0; j < 5; ++j) {
        ok += get(server_.port(), "/healthz").status == 200;
      }
    });
  }
  for (auto& c : clients) {
    c.join();
  }
  EXPECT_EQ(ok.load(), 80);
}

TEST(Server, SlowClientTimesOutWithoutBlockingOthers) {
  Server server({.address = "127.0.0.1",
                 .port = 0,
                 .request_timeout = std::chrono::milliseconds(300),
                 .worker_threads = 2});
  server.handle("/x", [](const Request&) { return Response{200, "text/plain", "x"}; });
  server.start();
  const auto t0 = Clock::now();
  const int slow = connect_loopback(server.port());
  send_all(slow, "GET /x HTTP/1.1\r\nHo");  // and then nothing
  // Served meanwhile by the other worker.
  EXPECT_EQ(get(server.port(), "/x").status, 200);
  const Reply timed_out = parse_reply(read_until_close(slow));
  const auto waited = Clock::now() - t0;
  ::close(slow);
  EXPECT_EQ(timed_out.status, 408);
  EXPECT_GE(waited, std::chrono::milliseconds(250));
  EXPECT_LT(waited, std::chrono::seconds(3));
}

TEST(Server, HandlerExceptionIs500) {
  Server server({.address = "127.0.0.1"});
  server.handle("/boom", [](const Request&) -> Response { throw std::runtime_error("boom"); });
  server.start();
  EXPECT_EQ(get(server.port(), "/boom").status, 500);
  EXPECT_EQ(get(server.port(), "/boom").status, 500);  // and it keeps serving
}

TEST(Server, StopIsPromptWithAnIdleClientConnected) {
  Server server({.address = "127.0.0.1"});  // default 5 s request timeout
  server.start();
  EXPECT_TRUE(server.running());
  const int idle = connect_loopback(server.port());
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // let a worker pick it up
  const auto t0 = Clock::now();
  server.stop();
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(1));
  EXPECT_FALSE(server.running());
  ::close(idle);
  server.stop();  // idempotent
  EXPECT_THROW(connect_loopback(server.port()), std::runtime_error);
}

TEST(Server, BindErrorsNameTheAddress) {
  Server first({.address = "127.0.0.1"});
  first.start();
  Server second({.address = "127.0.0.1", .port = first.port()});
  try {
    second.start();
    ADD_FAILURE() << "second bind to the same port succeeded";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("127.0.0.1:" + std::to_string(first.port())),
              std::string::npos)
        << e.what();
  }
  Server bad({.address = "not-an-ip"});
  EXPECT_THROW(bad.start(), std::runtime_error);
}

}  // namespace
}  // namespace ddp3d::http
