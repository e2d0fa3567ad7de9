// The real Prometheus server (Debian package prometheus) scrapes a MetricsServer over
// loopback. Proves the HTTP server interoperates with Prometheus' own scraper and that
// Prometheus reads back exactly the values and (escaped) label values we wrote.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <prometheus/counter.h>
#include <prometheus/histogram.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/http/metrics_server.h"
#include "common/metrics/collection.h"
#include "common/metrics/process_collector.h"
#include "tests/unit/common/raw_http_client.h"

extern char** environ;

namespace ddp3d {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return "";
}

// A port nothing listens on right now (Prometheus cannot report an ephemeral one back).
std::uint16_t free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    if (fd >= 0) {
      ::close(fd);
    }
    throw std::runtime_error("cannot find a free loopback port");
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// One Prometheus server in a scratch directory, stopped (SIGTERM, then waited for) on exit.
class PrometheusProcess {
 public:
  PrometheusProcess(const std::string& binary, std::uint16_t target_port) {
    char tmpl[] = "/tmp/ddp3d_prometheus_XXXXXX";
    dir_ = ::mkdtemp(tmpl);
    port_ = free_port();
    std::ofstream(dir_ / "prometheus.yml")
        << "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
        << "scrape_configs:\n  - job_name: ddp3d\n    static_configs:\n"
        << "      - targets: ['127.0.0.1:" << target_port << "']\n";
    const std::vector<std::string> args = {
        binary, "--config.file=" + (dir_ / "prometheus.yml").string(),
        "--storage.tsdb.path=" + (dir_ / "data").string(),
        "--web.listen-address=127.0.0.1:" + std::to_string(port_), "--log.level=warn"};
    std::vector<char*> argv;
    argv.reserve(args.size() + 1);
    for (const auto& a : args) {
      argv.push_back(const_cast<char*>(a.c_str()));
    }
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    const std::string log = (dir_ / "prometheus.log").string();
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    if (::posix_spawn(&pid_, binary.c_str(), &actions, nullptr, argv.data(), environ) != 0) {
      pid_ = -1;
    }
    posix_spawn_file_actions_destroy(&actions);
  }

  ~PrometheusProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      int status = 0;
      ::waitpid(pid_, &status, 0);
    }
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  bool started() const { return pid_ > 0; }
  std::uint16_t port() const { return port_; }
  std::string log() const { return read_text(dir_ / "prometheus.log"); }

  // GET on Prometheus' HTTP API; "" if it does not answer (yet).
  std::string api(const std::string& path_and_query) const {
    try {
      return http::test::raw_exchange(
          port_,
          "GET " + path_and_query + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    } catch (const std::runtime_error&) {
      return "";
    }
  }

 private:
  fs::path dir_;
  std::uint16_t port_ = 0;
  pid_t pid_ = -1;
};

TEST(PrometheusScrape, ServerScrapesOurEndpointAndReadsValuesBack) {
  const std::string binary = find_on_path("prometheus");
  ASSERT_FALSE(binary.empty())
      << "prometheus not found on PATH (Debian package 'prometheus'; run tools/setup.sh)";

  metrics::Collection metrics;
  metrics.add(std::make_shared<metrics::ProcessCollector>());
  // A label value that needs every escape, plus a non-ASCII character.
  prometheus::BuildCounter()
      .Name("ddp3d_scrape_probe_total")
      .Help("Probe.")
      .Register(metrics.registry())
      .Add({{"kind", "a\"b\\c\nd é"}})
      .Increment(7);
  auto& h = prometheus::BuildHistogram()
                .Name("ddp3d_scrape_probe_seconds")
                .Help("Probe time.")
                .Register(metrics.registry())
                .Add({}, std::vector<double>{0.5, 1});
  h.Observe(0.25);
  h.Observe(3);
  http::MetricsServer endpoint(metrics, {.address = "127.0.0.1", .port = 0});
  endpoint.start();

  PrometheusProcess prometheus(binary, endpoint.port());
  ASSERT_TRUE(prometheus.started());

  // Prometheus reports the counter with the label value decoded (then JSON-escaped).
  const std::string want_series = R"("kind":"a\"b\\c\nd é")";
  std::string answer;
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  while (Clock::now() < deadline) {
    answer = prometheus.api("/api/v1/query?query=ddp3d_scrape_probe_total");
    if (answer.find(want_series) != std::string::npos) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  ASSERT_NE(answer.find(want_series), std::string::npos) << "last answer:\n"
                                                         << answer << "\nprometheus log:\n"
                                                         << prometheus.log();
  EXPECT_NE(answer.find(R"(,"7"]})"), std::string::npos) << answer;

  const std::string count = prometheus.api("/api/v1/query?query=ddp3d_scrape_probe_seconds_count");
  EXPECT_NE(count.find(R"(,"2"]})"), std::string::npos) << count;
  const std::string bucket =
      prometheus.api("/api/v1/query?query=ddp3d_scrape_probe_seconds_bucket%7Ble%3D%220.5%22%7D");
  EXPECT_NE(bucket.find(R"(,"1"]})"), std::string::npos) << bucket;
  const std::string fds = prometheus.api("/api/v1/query?query=process_open_fds");
  EXPECT_NE(fds.find(R"("__name__":"process_open_fds")"), std::string::npos) << fds;

  // The scrape itself was clean: target up, no error.
  const std::string targets = prometheus.api("/api/v1/targets");
  EXPECT_NE(targets.find(R"("health":"up")"), std::string::npos) << targets;
  EXPECT_NE(targets.find(R"("lastError":"")"), std::string::npos) << targets;
}

}  // namespace
}  // namespace ddp3d
