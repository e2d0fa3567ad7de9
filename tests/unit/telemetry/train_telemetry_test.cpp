// The worker's training metrics (docs/metrics.md, "Worker metrics"): what the families hold
// after a known sequence of steps, their labels, where the endpoint listens, and that it
// serves them over HTTP.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <limits>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>

#include "../common/exposition_labels.h"
#include "../common/promtool.h"
#include "../common/raw_http_client.h"
#include "common/metrics/collection.h"
#include "common/metrics/process_collector.h"
#include "worker/telemetry/prometheus_telemetry.h"
#include "worker/telemetry/worker_metrics.h"

namespace ddp3d::telemetry {
namespace {

bool has_line(const std::string& text, const std::string& line) {
  return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}

constexpr const char* kJob3 = R"({job_name="pp-car",rank="3"})";

TEST(TrainTelemetry, FamiliesHoldTheValuesOfFiveSteps) {
  metrics::Collection metrics;
  PrometheusTrainTelemetry telemetry(metrics.registry(), {"pp-car", "3"});
  // 5 iterations of 4 samples; the 2nd and 4th are accumulation steps (no all-reduce).
  // Binary fractions, so the sum is exact: 2^-8, 2^-7, 2^-6, 2^-5 and 1.5 s.
  const double step_s[] = {0.00390625, 0.0078125, 0.015625, 0.03125, 1.5};
  for (int i = 0; i < 5; ++i) {
    engine::StepRecord r;
    r.epoch = i < 3 ? 1 : 2;
    r.samples = 4;
    r.step_seconds = step_s[i];
    r.lr = i == 4 ? 0.005 : 0.001;
    if (i % 2 == 0) r.allreduce_seconds = 0.00025 * (i + 1);
    telemetry.on_step(r);
  }
  telemetry.on_loss(0.75);
  const std::string text = metrics.text();
  const std::string l = kJob3;
  EXPECT_TRUE(has_line(text, "# TYPE ddp3d_train_steps_total counter")) << text;
  EXPECT_TRUE(has_line(text, "ddp3d_train_steps_total" + l + " 5")) << text;
  EXPECT_TRUE(has_line(text, "# TYPE ddp3d_train_samples_total counter")) << text;
  EXPECT_TRUE(has_line(text, "ddp3d_train_samples_total" + l + " 20")) << text;
  EXPECT_TRUE(has_line(text, "# TYPE ddp3d_train_epoch gauge")) << text;
  EXPECT_TRUE(has_line(text, "ddp3d_train_epoch" + l + " 2")) << text;
  EXPECT_TRUE(has_line(text, "ddp3d_train_lr" + l + " 0.005")) << text;
  EXPECT_TRUE(has_line(text, "# TYPE ddp3d_train_loss gauge")) << text;
  EXPECT_TRUE(has_line(text, "ddp3d_train_loss" + l + " 0.75")) << text;
  // Step time: buckets 0.005, 0.01, 0.02, 0.04, ... (le inclusive, cumulative).
  EXPECT_TRUE(has_line(text, "# TYPE ddp3d_step_seconds histogram")) << text;
  EXPECT_TRUE(
      has_line(text, R"(ddp3d_step_seconds_bucket{job_name="pp-car",rank="3",le="0.005"} 1)"))
      << text;
  EXPECT_TRUE(
      has_line(text, R"(ddp3d_step_seconds_bucket{job_name="pp-car",rank="3",le="0.01"} 2)"))
      << text;
  EXPECT_TRUE(
      has_line(text, R"(ddp3d_step_seconds_bucket{job_name="pp-car",rank="3",le="0.04"} 4)"))
      << text;
  EXPECT_TRUE(
      has_line(text, R"(ddp3d_step_seconds_bucket{job_name="pp-car",rank="3",le="+Inf"} 5)"))
      << text;
  EXPECT_TRUE(has_line(text, "ddp3d_step_seconds_count" + l + " 5")) << text;
  EXPECT_TRUE(has_line(text, "ddp3d_step_seconds_sum" + l + " 1.55859375")) << text;
  // All-reduce: only the 3 synchronising steps (0.00025, 0.00075, 0.00125 s).
  EXPECT_TRUE(has_line(text, "# TYPE ddp3d_allreduce_seconds histogram")) << text;
  EXPECT_TRUE(has_line(text, "ddp3d_allreduce_seconds_count" + l + " 3")) << text;
  EXPECT_TRUE(
      has_line(text, R"(ddp3d_allreduce_seconds_bucket{job_name="pp-car",rank="3",le="0.0004"} 1)"))
      << text;
  EXPECT_TRUE(
      has_line(text, R"(ddp3d_allreduce_seconds_bucket{job_name="pp-car",rank="3",le="0.0008"} 2)"))
      << text;
  EXPECT_TRUE(
      has_line(text, R"(ddp3d_allreduce_seconds_bucket{job_name="pp-car",rank="3",le="0.0016"} 3)"))
      << text;
}

TEST(TrainTelemetry, TheIterationsLeftAreAnnouncedAtStart) {
  metrics::Collection metrics;
  PrometheusTrainTelemetry telemetry(metrics.registry(), {"j", "0"});
  EXPECT_TRUE(has_line(metrics.text(), R"(ddp3d_train_max_steps{job_name="j",rank="0"} 0)"));
  telemetry.on_start(27);
  telemetry.on_step({1, 2, 0.1, 0.01, 0.001});
  const std::string text = metrics.text();
  EXPECT_TRUE(has_line(text, R"(ddp3d_train_max_steps{job_name="j",rank="0"} 27)")) << text;
  EXPECT_TRUE(has_line(text, R"(ddp3d_train_steps_total{job_name="j",rank="0"} 1)")) << text;
}

TEST(TrainTelemetry, EveryFamilyButTheLossIsThereBeforeTheFirstStep) {
  metrics::Collection metrics;
  PrometheusTrainTelemetry telemetry(metrics.registry(), {"j", "0"});
  const std::string text = metrics.text();
  const std::string l = R"({job_name="j",rank="0"})";
  EXPECT_TRUE(has_line(text, "ddp3d_train_steps_total" + l + " 0")) << text;
  EXPECT_TRUE(has_line(text, "ddp3d_train_samples_total" + l + " 0")) << text;
  EXPECT_TRUE(has_line(text, "ddp3d_train_epoch" + l + " 0")) << text;
  EXPECT_TRUE(has_line(text, "ddp3d_step_seconds_count" + l + " 0")) << text;
  EXPECT_TRUE(has_line(text, "ddp3d_allreduce_seconds_count" + l + " 0")) << text;
  // A 0 would read as a perfect loss, NaN would trip the not-finite alert: absent instead.
  EXPECT_EQ(text.find("ddp3d_train_loss"), std::string::npos) << text;
}

TEST(TrainTelemetry, NonFiniteLossIsExportedAsIs) {
  metrics::Collection metrics;
  PrometheusTrainTelemetry telemetry(metrics.registry(), {"j", "1"});
  telemetry.on_loss(std::numeric_limits<double>::quiet_NaN());
  EXPECT_TRUE(has_line(metrics.text(), R"(ddp3d_train_loss{job_name="j",rank="1"} Nan)"));
  telemetry.on_loss(2.5);
  EXPECT_TRUE(has_line(metrics.text(), R"(ddp3d_train_loss{job_name="j",rank="1"} 2.5)"));
}

TEST(TrainTelemetry, RanksAreSeparateSeriesOfOneFamily) {
  metrics::Collection metrics;
  PrometheusTrainTelemetry rank0(metrics.registry(), {"j", "0"});
  PrometheusTrainTelemetry rank1(metrics.registry(), {"j", "1"});
  rank0.on_step({1, 2, 0.1, 0.01, 0.001});
  rank1.on_step({1, 3, 0.1, 0.01, 0.001});
  rank1.on_step({1, 3, 0.1, 0.01, 0.001});
  const std::string text = metrics.text();
  EXPECT_TRUE(has_line(text, R"(ddp3d_train_steps_total{job_name="j",rank="0"} 1)")) << text;
  EXPECT_TRUE(has_line(text, R"(ddp3d_train_steps_total{job_name="j",rank="1"} 2)")) << text;
  EXPECT_TRUE(has_line(text, R"(ddp3d_train_samples_total{job_name="j",rank="1"} 6)")) << text;
}

// No worker label may be one a scrape attaches to every target (job, instance, namespace, pod,
// container, service, endpoint, node, "__*"): Prometheus would store it as exported_<name> and
// the chart's training alerts and dashboard, which group by job_name, would lose the job.
TEST(TrainTelemetry, NoLabelIsOneAScrapeAttachesToItsTarget) {
  metrics::Collection metrics;
  metrics.add(std::make_shared<metrics::ProcessCollector>());
  PrometheusTrainTelemetry telemetry(metrics.registry(), {"pp-car", "3"});
  telemetry.on_start(10);
  engine::StepRecord r;
  r.epoch = 1;
  r.samples = 4;
  r.step_seconds = 0.1;
  r.lr = 0.001;
  r.allreduce_seconds = 0.01;
  telemetry.on_step(r);
  telemetry.on_loss(0.5);
  const std::string text = metrics.text();
  // Every registered family has a sample, so each one's labels are checked below.
  for (const auto& family : metrics.registry().Collect()) {
    EXPECT_NE(text.find("\n# TYPE " + family.name + " "), std::string::npos)
        << family.name << " has no sample in this test, so its labels are not checked:\n"
        << text;
  }
  EXPECT_EQ(metrics::test::label_names(text).at("ddp3d_train_steps_total"),
            (std::set<std::string>{"job_name", "rank"}));
  const auto collisions = metrics::test::scrape_label_collisions(text);
  EXPECT_TRUE(collisions.empty()) << ::testing::PrintToString(collisions) << " in:\n" << text;
}

TEST(MetricsEndpoint, OffUnlessAsked) {
  const auto s = resolve_metrics_endpoint(std::nullopt, std::nullopt, 0, 0, "");
  EXPECT_FALSE(s.enabled);
}

TEST(MetricsEndpoint, EnvironmentWinsAndLocalRankOffsetsThePort) {
  const auto s = resolve_metrics_endpoint("9400", 9100, 3, 11, "pp-car");
  EXPECT_TRUE(s.enabled);
  EXPECT_EQ(s.port, 9403);
  EXPECT_EQ(s.origin, "DDP3D_METRICS_PORT=9400");
  EXPECT_EQ(s.labels.job_name, "pp-car");
  EXPECT_EQ(s.labels.rank, "11");
  const auto c = resolve_metrics_endpoint(std::nullopt, 9100, 1, 1, "");
  EXPECT_EQ(c.port, 9101);
  EXPECT_EQ(c.origin, "env_cfg.metrics_port=9100");
  EXPECT_EQ(c.labels.job_name, "local");
}

TEST(MetricsEndpoint, PortZeroLetsEveryRankPickItsOwn) {
  const auto s = resolve_metrics_endpoint("0", std::nullopt, 5, 5, "");
  EXPECT_TRUE(s.enabled);
  EXPECT_EQ(s.port, 0);
}

TEST(MetricsEndpoint, BadPortsNameTheirOrigin) {
  for (const std::string bad : {"", "abc", "94OO", "-1", "65536", "9400 "}) {
    try {
      resolve_metrics_endpoint(bad, std::nullopt, 0, 0, "");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("DDP3D_METRICS_PORT: '" + bad + "'"), std::string::npos)
          << e.what();
    }
  }
  EXPECT_THROW(resolve_metrics_endpoint(std::nullopt, 70000, 0, 0, ""), std::invalid_argument);
  try {
    resolve_metrics_endpoint("65534", std::nullopt, 2, 2, "");
    ADD_FAILURE() << "65534 + 2 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("LOCAL_RANK 2 is past 65535"), std::string::npos)
        << e.what();
  }
}

TEST(WorkerMetrics, ServesTheTrainingFamiliesOverHttp) {
  MetricsEndpointSettings s = resolve_metrics_endpoint("0", std::nullopt, 0, 4, "demo");
  s.address = "127.0.0.1";
  WorkerMetrics m(s);
  ASSERT_NE(m.port(), 0);
  m.telemetry().on_step({1, 8, 0.2, 0.1, 0.01});
  const auto reply =
      http::test::parse_reply(http::test::raw_exchange(m.port(), "GET /metrics HTTP/1.0\r\n\r\n"));
  EXPECT_EQ(reply.status, 200);
  EXPECT_TRUE(has_line(reply.body, R"(ddp3d_train_samples_total{job_name="demo",rank="4"} 8)"))
      << reply.body;
  EXPECT_NE(reply.body.find("process_resident_memory_bytes"), std::string::npos);
  const auto not_ready =
      http::test::parse_reply(http::test::raw_exchange(m.port(), "GET /readyz HTTP/1.0\r\n\r\n"));
  EXPECT_EQ(not_ready.status, 503);
  m.set_ready(true);
  const auto ready =
      http::test::parse_reply(http::test::raw_exchange(m.port(), "GET /readyz HTTP/1.0\r\n\r\n"));
  EXPECT_EQ(ready.status, 200);
  // What the worker binary serves passes Prometheus' own checker.
  const std::string promtool = metrics::test::find_promtool();
  ASSERT_FALSE(promtool.empty()) << "promtool not found on PATH (Debian package 'prometheus')";
  m.telemetry().on_loss(0.5);
  const auto full =
      http::test::parse_reply(http::test::raw_exchange(m.port(), "GET /metrics HTTP/1.0\r\n\r\n"));
  const auto run = metrics::test::promtool_check(promtool, full.body);
  EXPECT_EQ(run.exit_code, 0) << run.output << "\non:\n" << full.body;
  EXPECT_TRUE(run.output.empty()) << run.output;
  EXPECT_TRUE(metrics::test::scrape_label_collisions(full.body).empty()) << full.body;
}

TEST(MetricsEndpoint, TheBindAddressComesFromTheEnvironmentAndIsChecked) {
  EXPECT_EQ(resolve_metrics_address(std::nullopt), "0.0.0.0");
  EXPECT_EQ(resolve_metrics_address("127.0.0.1"), "127.0.0.1");
  for (const std::string bad : {"", "localhost", "127.0.0.256", "::1", "10.0.0.1 "}) {
    try {
      resolve_metrics_address(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("DDP3D_METRICS_ADDRESS: '" + bad + "'"),
                std::string::npos)
          << e.what();
    }
  }
}

// True when a TCP connection to ip:port is accepted.
bool accepts(const char* ip, std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  ::inet_pton(AF_INET, ip, &addr.sin_addr);
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  ::close(fd);
  return ok;
}

TEST(WorkerMetrics, ListensOnlyOnItsBindAddress) {
  // 127.0.0.2 is loopback too, but a server bound to it is not reachable on 127.0.0.1.
  MetricsEndpointSettings s = resolve_metrics_endpoint("0", std::nullopt, 0, 0, "");
  s.address = resolve_metrics_address("127.0.0.2");
  WorkerMetrics m(s);
  EXPECT_TRUE(accepts("127.0.0.2", m.port()));
  EXPECT_FALSE(accepts("127.0.0.1", m.port()));
}

TEST(WorkerMetrics, APortInUseIsAnErrorNamingIt) {
  // Hold a port, then ask for it.
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const std::string port = std::to_string(ntohs(addr.sin_port));
  MetricsEndpointSettings s = resolve_metrics_endpoint(port, std::nullopt, 0, 0, "");
  s.address = "127.0.0.1";
  try {
    WorkerMetrics m(s);
    ADD_FAILURE() << "bound a port that is in use";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("127.0.0.1:" + port), std::string::npos) << what;
    EXPECT_NE(what.find("DDP3D_METRICS_PORT=" + port), std::string::npos) << what;
  }
  ::close(fd);
}

}  // namespace
}  // namespace ddp3d::telemetry
