// The bad-config table: each broken config fails with a message naming the key and the file
// (and line) that set it; several problems are reported together.
#include <gtest/gtest.h>

#include <ostream>

#include "tests/unit/config/temp_dir.h"

namespace ddp3d::config {
namespace {

using testing::error_of;
using testing::kToyConfig;
using testing::TempDir;

struct BadConfig {
  const char* name;
  // Files written to a temp dir next to toy.yaml (the valid toy config); the first is loaded.
  std::vector<std::pair<std::string, std::string>> files;
  std::vector<std::string> cfg_options;
  // Substrings the message must contain; "{dir}" expands to the temp dir.
  std::vector<std::string> expected;
};

void PrintTo(const BadConfig& c, std::ostream* os) {
  *os << c.name;
}

std::string expand(std::string s, const std::string& var, const std::string& value) {
  for (std::size_t at = s.find(var); at != std::string::npos; at = s.find(var, at + value.size())) {
    s.replace(at, var.size(), value);
  }
  return s;
}

class BadConfigTable : public ::testing::TestWithParam<BadConfig> {};

TEST_P(BadConfigTable, FailsNamingKeyAndFile) {
  const BadConfig& c = GetParam();
  TempDir dir;
  dir.write("toy.yaml", kToyConfig);
  for (const auto& [name, text] : c.files) dir.write(name, text);
  const std::string msg = error_of([&] { load(dir.path(c.files.front().first), c.cfg_options); });
  for (const std::string& e : c.expected) {
    EXPECT_NE(msg.find(expand(e, "{dir}", dir.path(""))), std::string::npos)
        << "missing: " << expand(e, "{dir}", dir.path("")) << "\nin: " << msg;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Config, BadConfigTable,
    ::testing::Values(
        BadConfig{"unknown_key",
                  {{"x.yaml", "_base_: toy.yaml\nddp: {bucket_cap: 10}\n"}},
                  {},
                  {"{dir}x.yaml:2: ddp.bucket_cap: unknown key (did you mean 'bucket_cap_mb'?)"}},
        BadConfig{"unknown_top_level_key",
                  {{"x.yaml", "_base_: toy.yaml\noptimizer: {lr: 1}\n"}},
                  {},
                  {"{dir}x.yaml:2: optimizer: unknown key"}},
        BadConfig{
            "wrong_type_in_base",
            {{"cfg/x.yaml", "_base_: ../base/b.yaml\n"},
             {"base/b.yaml", "_base_: ../toy.yaml\noptim_wrapper: {optimizer: {lr: abc}}\n"}},
            {},
            {"{dir}base/b.yaml:2: optim_wrapper.optimizer.lr: expected a number, got \"abc\""}},
        BadConfig{"wrong_type_list",
                  {{"x.yaml", "_base_: toy.yaml\nmodel: {hidden: [8, 1.5]}\n"}},
                  {},
                  {"{dir}x.yaml:2: model.hidden.1: expected an integer, got 1.5"}},
        BadConfig{"out_of_range",
                  {{"x.yaml", "_base_: toy.yaml\ntrain_dataloader: {batch_size: 0}\n"}},
                  {},
                  {"{dir}x.yaml:2: train_dataloader.batch_size: must be >= 1, got 0"}},
        BadConfig{"not_in_enum",
                  {{"x.yaml", "_base_: toy.yaml\nenv_cfg: {dist_cfg: {backend: mpi}}\n"}},
                  {},
                  {"{dir}x.yaml:2: env_cfg.dist_cfg.backend: expected one of: auto, nccl, gloo; "
                   "got \"mpi\""}},
        BadConfig{"unknown_variant",
                  {{"x.yaml", "_base_: toy.yaml\noptim_wrapper: {optimizer: {type: Adagrad}}\n"}},
                  {},
                  {"{dir}x.yaml:2: optim_wrapper.optimizer.type: expected one of: AdamW, Adam, "
                   "SGD; got \"Adagrad\""}},
        BadConfig{
            "key_of_another_variant",
            {{"x.yaml", "_base_: toy.yaml\noptim_wrapper: {optimizer: {betas: [0.9, 0.99]}}\n"}},
            {},
            {"{dir}x.yaml:2: optim_wrapper.optimizer.betas: not a key of SGD; AdamW, Adam have "
             "it (set optim_wrapper.optimizer.type)"}},
        BadConfig{"missing_required",
                  {{"x.yaml", "model: {type: ToyRegressor}\n"}},
                  {},
                  {"{dir}x.yaml:1: model.in_features: missing required key",
                   "{dir}x.yaml: train_dataloader: missing required key",
                   "{dir}x.yaml: optim_wrapper: missing required key",
                   "{dir}x.yaml: train_cfg: missing required key"}},
        BadConfig{"wrong_length",
                  {{"x.yaml",
                    "_base_: toy.yaml\noptim_wrapper: {optimizer: {type: AdamW, betas: [0.9]}}\n"}},
                  {},
                  {"{dir}x.yaml:2: optim_wrapper.optimizer.betas: expected a list of length 2, "
                   "got 1 elements"}},
        BadConfig{"missing_base_file",
                  {{"x.yaml", "_base_: [../_base_/nope.yaml]\n"}},
                  {},
                  {"{dir}x.yaml:1: _base_: base file not found: ",
                   "_base_/nope.yaml (via {dir}x.yaml -> "}},
        BadConfig{"cycle_in_base",
                  {{"x.yaml", "_base_: y.yaml\n"}, {"y.yaml", "_base_: x.yaml\n"}},
                  {},
                  {"{dir}y.yaml:1: _base_: cycle in _base_: {dir}x.yaml -> {dir}y.yaml -> "
                   "{dir}x.yaml"}},
        BadConfig{"bad_cfg_option_key",
                  {{"x.yaml", "_base_: toy.yaml\n"}},
                  {"model.hiden=[4]"},
                  {"--cfg-options model.hiden=[4]: model.hiden: unknown key (did you mean "
                   "'hidden'?)"}},
        BadConfig{"bad_cfg_option_type",
                  {{"x.yaml", "_base_: toy.yaml\n"}},
                  {"ddp.broadcast_buffers=maybe"},
                  {"--cfg-options ddp.broadcast_buffers=maybe: ddp.broadcast_buffers: expected "
                   "true or false, got \"maybe\""}},
        // More loader threads than any machine has: refused before a thread is started.
        BadConfig{"too_many_loader_workers",
                  {{"x.yaml",
                    "_base_: toy.yaml\ntrain_dataloader: {num_workers: 100000}\n"
                    "val_dataloader: {batch_size: 1, num_workers: 99999999999999,\n"
                    "  dataset: {type: SyntheticRegression, num_samples: 8}}\n"}},
                  {"test_dataloader.num_workers=1025"},
                  {"{dir}x.yaml:2: train_dataloader.num_workers: must be <= 1024, got 100000",
                   "{dir}x.yaml:3: val_dataloader.num_workers: must be <= 1024, got "
                   "99999999999999",
                   "test_dataloader.num_workers: must be <= 1024, got 1025"}},
        BadConfig{"yaml_syntax",
                  {{"x.yaml", "_base_: toy.yaml\nmodel: [1\n"}},
                  {},
                  {"{dir}x.yaml:", "invalid YAML"}}),
    [](const ::testing::TestParamInfo<BadConfig>& info) { return std::string(info.param.name); });

TEST(SchemaErrors, AllProblemsAreReportedTogether) {
  TempDir dir;
  dir.write("x.yaml", std::string(kToyConfig) +
                          "ddp: {bucket_cap_mb: -1, broadcast: true}\n"
                          "log_level: LOUD\n");
  const std::string msg = error_of([&] { load(dir.path("x.yaml")); });
  EXPECT_NE(msg.find("3 config errors:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("ddp.bucket_cap_mb: must be > 0, got -1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("ddp.broadcast: unknown key"), std::string::npos) << msg;
  EXPECT_NE(msg.find("x.yaml:9: log_level: expected one of: DEBUG, INFO, WARNING, ERROR"),
            std::string::npos)
      << msg;
}

TEST(SchemaErrors, TheErrorListsIssuesStructurally) {
  try {
    parse(std::string(kToyConfig) + "ddp: {bucket_cap_mb: 0}\n", "s.yaml");
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    ASSERT_EQ(e.issues().size(), 1u);
    EXPECT_EQ(e.issues()[0].origin, "s.yaml:8");
    EXPECT_EQ(e.issues()[0].key, "ddp.bucket_cap_mb");
    EXPECT_EQ(e.issues()[0].message, "must be > 0, got 0");
  }
}

}  // namespace
}  // namespace ddp3d::config
