// /proc parsing on literal inputs, then the live collector against facts we control
// (descriptors we open, the clock, a resident buffer we touch).
#include "common/metrics/process_collector.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <prometheus/metric_family.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/metrics/collection.h"

namespace ddp3d::metrics {
namespace {

// A real line captured from Linux, with a command name containing spaces and ')'.
constexpr const char* kStat =
    "4242 (my (weird) name) S 1 4242 4242 0 -1 4194560 1020 0 0 0 150 37 0 0 20 0 3 0 "
    "987654 123456789 2048 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 17 3 0 0 0 0 0\n";

TEST(ParseProcStat, ReadsFieldsAfterTheLastParenthesis) {
  const ProcStat s = parse_proc_stat(kStat);
  EXPECT_EQ(s.utime_ticks, 150u);
  EXPECT_EQ(s.stime_ticks, 37u);
  EXPECT_EQ(s.start_time_ticks, 987654u);
  EXPECT_EQ(s.vsize_bytes, 123456789u);
  EXPECT_EQ(s.rss_pages, 2048);
}

TEST(ParseProcStat, RejectsTruncatedAndGarbage) {
  EXPECT_THROW(parse_proc_stat("123 no-paren S 1 2 3"), std::runtime_error);
  EXPECT_THROW(parse_proc_stat("1 (x) S 1 2 3 4"), std::runtime_error);
  std::string bad = kStat;
  bad.replace(bad.find(" 150 "), 5, " 1x0 ");
  try {
    parse_proc_stat(bad);
    ADD_FAILURE() << "expected a parse error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("field 14"), std::string::npos) << e.what();
  }
}

TEST(ParseBootTime, FindsBtimeLine) {
  EXPECT_EQ(parse_boot_time("cpu  1 2 3\nintr 5\nbtime 1700000000\nprocesses 9\n"),
            std::optional<std::uint64_t>(1700000000));
  EXPECT_EQ(parse_boot_time("cpu 1 2\n"), std::nullopt);
}

std::map<std::string, prometheus::MetricFamily> by_name(
    const std::vector<prometheus::MetricFamily>& families) {
  std::map<std::string, prometheus::MetricFamily> out;
  for (const auto& f : families) {
    out[f.name] = f;
  }
  return out;
}

double value_of(const std::map<std::string, prometheus::MetricFamily>& m, const std::string& name) {
  const auto it = m.find(name);
  EXPECT_NE(it, m.end()) << name << " missing";
  if (it == m.end() || it->second.metric.size() != 1) {
    return -1;
  }
  const prometheus::ClientMetric& sample = it->second.metric[0];
  return it->second.type == prometheus::MetricType::Counter ? sample.counter.value
                                                            : sample.gauge.value;
}

TEST(ProcessCollector, LiveValuesMatchWhatThisProcessDoes) {
  ProcessCollector collector;
  const auto before = by_name(collector.Collect());
  ASSERT_EQ(before.size(), 6u);
  EXPECT_EQ(before.at("process_cpu_seconds_total").type, prometheus::MetricType::Counter);

  // Five more descriptors must show up exactly.
  std::vector<int> fds;
  fds.reserve(5);
  for (int i = 0; i < 5; ++i) {
    fds.push_back(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  }
  // Touch 64 MiB so resident memory grows by at least most of it.
  constexpr std::size_t kBytes = 64u << 20;
  std::vector<char> buffer(kBytes);
  std::memset(buffer.data(), 1, buffer.size());
  // Burn some CPU so the counter can only have gone up.
  volatile double sink = 0;
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
  while (std::chrono::steady_clock::now() < until) {
    sink = sink + 1;
  }

  const auto after = by_name(collector.Collect());
  for (int fd : fds) {
    ::close(fd);
  }

  EXPECT_EQ(value_of(after, "process_open_fds"), value_of(before, "process_open_fds") + 5);
  EXPECT_GE(value_of(after, "process_resident_memory_bytes"),
            value_of(before, "process_resident_memory_bytes") + static_cast<double>(kBytes) / 2);
  EXPECT_GE(value_of(after, "process_virtual_memory_bytes"),
            value_of(after, "process_resident_memory_bytes"));
  EXPECT_GE(value_of(after, "process_cpu_seconds_total"),
            value_of(before, "process_cpu_seconds_total"));
  EXPECT_GT(value_of(after, "process_max_fds"), value_of(after, "process_open_fds"));

  // The test process started within the last few minutes, not at boot or in the future.
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  const double start = value_of(after, "process_start_time_seconds");
  EXPECT_LE(start, now + 1);
  EXPECT_GT(start, now - 600);
  EXPECT_EQ(buffer[kBytes - 1], 1);
}

TEST(ProcessCollector, JoinsACollectionOnce) {
  Collection c;
  c.add(std::make_shared<ProcessCollector>());
  const std::string text = c.text();
  EXPECT_NE(text.find("# TYPE process_cpu_seconds_total counter\n"), std::string::npos);
  EXPECT_NE(text.find("# TYPE process_open_fds gauge\n"), std::string::npos);
  EXPECT_THROW(c.add(std::make_shared<ProcessCollector>()), std::invalid_argument);
}

}  // namespace
}  // namespace ddp3d::metrics
