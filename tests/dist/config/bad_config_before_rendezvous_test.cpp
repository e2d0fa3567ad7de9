// A bad config must fail before the process group: otherwise one rank with a typo waits on a
// rendezvous its peers never join (or every rank sits in it until the timeout) before anyone
// sees the error. Each case runs the real `ddp3d train|test ... --launcher pytorch` as rank 1
// of a world of 2 whose MASTER_PORT nobody listens on, so a rendezvous attempt could only
// end at its timeout; the case passes only if the process exits at once with the config
// error (exit code 2) naming the key and the file, and never logged a rendezvous.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "tests/support/subprocess.h"

namespace ddp3d::testing {
namespace {

// A valid config (the toy model); the bad ones inherit from it. It keeps the default rendezvous
// timeout (env_cfg.dist_cfg.timeout, 1800 s), so a rank that tried to join would still be
// waiting at the test's deadline.
const char* const kBase =
    "model: {type: ToyRegressor, in_features: 4}\n"
    "train_dataloader:\n"
    "  batch_size: 8\n"
    "  dataset: {type: SyntheticRegression, num_samples: 64}\n"
    "optim_wrapper:\n"
    "  optimizer: {type: SGD, lr: 0.1}\n"
    "train_cfg: {max_epochs: 1}\n";
// Start-up (loading LibTorch) on a busy 2-core machine plus loading the config takes about a
// second; a process still running after this long is waiting on something else.
constexpr auto kDeadline = std::chrono::seconds(20);

struct BadConfig {
  const char* name;
  // Files written next to base.yaml; the first is the config given to ddp3d.
  std::vector<std::pair<std::string, std::string>> files;
  std::vector<std::string> cfg_options;
  // Substrings stderr must hold: the file (":line" where known), the key and the problem.
  // "{dir}" expands to the folder holding the files.
  std::vector<std::string> expected;
  // Run by `ddp3d train` only: `ddp3d test` stops earlier on the base (no test_dataloader).
  bool train_only = false;
};

void PrintTo(const BadConfig& c, std::ostream* os) {
  *os << c.name;
}

std::string expand_dir(std::string s, const std::string& dir) {
  const std::string var = "{dir}";
  for (std::size_t at = s.find(var); at != std::string::npos; at = s.find(var, at + dir.size()))
    s.replace(at, var.size(), dir);
  return s;
}

const std::vector<BadConfig>& bad_configs() {
  static const std::vector<BadConfig> table{
      {"unknown_key",
       {{"x.yaml", "_base_: base.yaml\nddp: {bucket_cap: 10}\n"}},
       {},
       {"{dir}x.yaml:2: ddp.bucket_cap: unknown key"}},
      {"wrong_type",
       {{"x.yaml", "_base_: base.yaml\noptim_wrapper: {optimizer: {lr: fast}}\n"}},
       {},
       {"{dir}x.yaml:2: optim_wrapper.optimizer.lr: expected a number, got \"fast\""}},
      {"missing_base_file",
       {{"x.yaml", "_base_: [base.yaml, gone/nope.yaml]\n"}},
       {},
       {"{dir}x.yaml:1: _base_: base file not found: {dir}gone/nope.yaml"}},
      {"cycle_in_base",
       {{"x.yaml", "_base_: [base.yaml, y.yaml]\n"}, {"y.yaml", "_base_: x.yaml\n"}},
       {},
       {"{dir}y.yaml:1: _base_: cycle in _base_: {dir}x.yaml -> {dir}y.yaml -> {dir}x.yaml"}},
      {"wrong_type_in_cfg_options",
       {{"x.yaml", "_base_: base.yaml\n"}},
       {"train_cfg.max_epochs=ten"},
       {"--cfg-options train_cfg.max_epochs=ten: train_cfg.max_epochs: expected an integer, got "
        "\"ten\""}},
      // CUDA-only options on a CPU rank (GPUS unset: CPU on every build).
      {"nccl_on_cpu",
       {{"x.yaml", "_base_: base.yaml\nenv_cfg: {dist_cfg: {backend: nccl}}\n"}},
       {},
       {"{dir}x.yaml:2: env_cfg.dist_cfg.backend: nccl needs CUDA, but this rank runs on CPU"},
       true},
      {"fp16_amp_on_cpu",
       {{"x.yaml", "_base_: base.yaml\noptim_wrapper: {type: AmpOptimWrapper, dtype: float16}\n"}},
       {},
       {"{dir}x.yaml:2: optim_wrapper.dtype: AmpOptimWrapper with float16 (loss scaling) needs "
        "CUDA, but this rank runs on CPU"},
       true},
  };
  return table;
}

class BadConfigBeforeRendezvous
    : public ::testing::TestWithParam<std::tuple<std::string, BadConfig>> {};

TEST_P(BadConfigBeforeRendezvous, ExitsWithTheErrorAndNeverJoins) {
  const auto& [command, c] = GetParam();
  const std::string dir = make_temp_dir("ddp3d-bad-config") + "/";
  const std::shared_ptr<void> remove_dir(nullptr, [&](void*) {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  });
  {
    std::ofstream(dir + "base.yaml") << kBase;
    for (const auto& [name, text] : c.files) {
      std::filesystem::create_directories(std::filesystem::path(dir + name).parent_path());
      std::ofstream(dir + name) << text;
    }
  }
  // stdout is dropped so that `output` is stderr alone, where the error must be.
  std::vector<std::string> argv{"bash",
                                "-c",
                                "exec \"$@\" >/dev/null",
                                "bash",
                                binary_path("worker/ddp3d"),
                                command,
                                dir + c.files.front().first};
  if (command == "test") argv.push_back(dir + "never-read.pth");
  argv.insert(argv.end(), {"--launcher", "pytorch", "--work-dir", dir + "work"});
  if (!c.cfg_options.empty()) {
    argv.push_back("--cfg-options");
    argv.insert(argv.end(), c.cfg_options.begin(), c.cfg_options.end());
  }
  const std::string port = std::to_string(free_port());  // nobody listens there
  const ProcessResult r = run(argv,
                              {{"RANK", "1"},
                               {"LOCAL_RANK", "0"},
                               {"WORLD_SIZE", "2"},
                               {"LOCAL_WORLD_SIZE", "1"},
                               {"MASTER_ADDR", "127.0.0.1"},
                               {"MASTER_PORT", port}},
                              kDeadline);

  ASSERT_FALSE(r.timed_out) << "still running after " << kDeadline.count()
                            << " s: waiting on a rendezvous?\n"
                            << r.output;
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_LT(r.elapsed.count(), kDeadline.count() / 2.0) << r.output;
  EXPECT_NE(r.output.find("config error"), std::string::npos) << r.output;
  for (const std::string& e : c.expected) {
    const std::string want = expand_dir(e, dir);
    EXPECT_NE(r.output.find(want), std::string::npos) << "missing: " << want << "\nin:\n"
                                                      << r.output;
  }
  // init_process_group logs "rendezvous at HOST:PORT ..." before it connects.
  EXPECT_EQ(r.output.find("rendezvous"), std::string::npos) << r.output;
}

// Every case under both commands, except the train-only ones (not instantiated for test).
std::vector<std::tuple<std::string, BadConfig>> command_cases() {
  std::vector<std::tuple<std::string, BadConfig>> out;
  for (const char* command : {"train", "test"}) {
    for (const auto& c : bad_configs()) {
      if (!c.train_only || std::string(command) == "train") out.emplace_back(command, c);
    }
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Commands, BadConfigBeforeRendezvous, ::testing::ValuesIn(command_cases()),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_" + std::get<1>(info.param).name;
                         });

}  // namespace
}  // namespace ddp3d::testing
