// Prometheus' own checker must accept what we serve: `promtool check metrics` (Debian
// package prometheus, installed by tools/setup.sh) parses the text format strictly and lints
// names. Missing promtool is a failure, not a skip: this is the only proof from outside.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include "common/metrics/process_collector.h"
#include "common/metrics/registry.h"

namespace ddp3d::metrics {
namespace {

std::string find_promtool() {
  if (const char* env = std::getenv("PROMTOOL")) return env;
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t pos = 0;
  while (pos <= dirs.size()) {
    const auto end = dirs.find(':', pos);
    const std::string dir =
        dirs.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    const std::string candidate = (dir.empty() ? "." : dir) + "/promtool";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  return "";
}

struct PromtoolRun {
  int exit_code = -1;
  std::string output;
};

// Feeds `text` to `promtool check metrics` on stdin; returns its exit code and output.
PromtoolRun promtool_check(const std::string& promtool, const std::string& text) {
  const auto file = std::filesystem::temp_directory_path() /
                    ("ddp3d_promtool_" + std::to_string(::getpid()) + ".prom");
  std::ofstream(file) << text;
  const std::string cmd = "'" + promtool + "' check metrics < '" + file.string() + "' 2>&1";
  PromtoolRun run;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (pipe == nullptr) return run;
  char buf[4096];
  while (const std::size_t n = std::fread(buf, 1, sizeof(buf), pipe)) run.output.append(buf, n);
  const int status = ::pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::filesystem::remove(file);
  return run;
}

// A registry with every metric kind, labels needing escapes, special values and the process
// collector: everything the writer can produce.
std::string full_exposition() {
  Registry r;
  register_process_collector(r);
  r.counter("ddp3d_test_steps_total", "Optimizer steps.").inc(42);
  auto& errors =
      r.counter("ddp3d_test_errors_total", "Errors by kind.\nSecond \\ line.", {"kind", "rank"});
  errors.labels({"nccl \"timeout\"", "0"}).inc();
  errors.labels({"path\\with\nnewline", "1"}).inc(2.5);
  errors.labels({"bad utf-8 \xff\xfe here, good: größe", "2"}).inc();
  auto& lr = r.gauge("ddp3d_test_learning_rate", "Learning rate.");
  lr.set(1.5e-4);
  auto& special = r.gauge("ddp3d_test_special", "Special values.", {"which"});
  special.labels({"nan"}).set(std::numeric_limits<double>::quiet_NaN());
  special.labels({"inf"}).set(std::numeric_limits<double>::infinity());
  special.labels({"neg_inf"}).set(-std::numeric_limits<double>::infinity());
  special.labels({"empty_label_value"});
  auto& step = r.histogram("ddp3d_test_step_seconds", "Step time.", default_buckets());
  step.observe(0.2);
  step.observe(3);
  auto& phase = r.histogram("ddp3d_test_phase_seconds", "Phase time.",
                            exponential_buckets(0.001, 10, 5), {"phase"});
  phase.labels({"forward"}).observe(0.05);
  phase.labels({"backward"}).observe(std::numeric_limits<double>::infinity());
  return r.expose();
}

TEST(Promtool, AcceptsEveryMetricKind) {
  const std::string promtool = find_promtool();
  ASSERT_FALSE(promtool.empty())
      << "promtool not found on PATH (Debian package 'prometheus'; run tools/setup.sh)";
  const std::string text = full_exposition();
  for (const char* must : {"# TYPE process_cpu_seconds_total counter",
                           "# TYPE ddp3d_test_step_seconds histogram", "le=\"+Inf\"", "NaN"}) {
    ASSERT_NE(text.find(must), std::string::npos) << must;
  }
  const PromtoolRun run = promtool_check(promtool, text);
  EXPECT_EQ(run.exit_code, 0) << "promtool said:\n" << run.output << "\non:\n" << text;
  EXPECT_TRUE(run.output.empty()) << run.output;
}

// The check is real: promtool must reject what Prometheus would reject, so a pass above
// means something.
TEST(Promtool, RejectsBrokenExposition) {
  const std::string promtool = find_promtool();
  ASSERT_FALSE(promtool.empty()) << "promtool not found on PATH";
  const PromtoolRun bad_value = promtool_check(promtool, "# TYPE x gauge\nx not_a_number\n");
  EXPECT_NE(bad_value.exit_code, 0) << bad_value.output;
  const PromtoolRun bad_escape = promtool_check(promtool, "# TYPE y gauge\ny{l=\"a\nb\"} 1\n");
  EXPECT_NE(bad_escape.exit_code, 0) << bad_escape.output;
  const PromtoolRun lint =
      promtool_check(promtool, "# HELP z_count Z.\n# TYPE z_count counter\nz_count 1\n");
  EXPECT_NE(lint.exit_code, 0) << lint.output;
}

}  // namespace
}  // namespace ddp3d::metrics
