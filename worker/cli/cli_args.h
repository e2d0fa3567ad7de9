// Command-line parsing for `ddp3d train` and `ddp3d test` (mmdet3d's tools/train.py and
// tools/test.py flags). Pure: argv in, values or an error message naming the flag out.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ddp3d::cli {

struct TrainArgs {
  std::string config;
  std::optional<std::string> work_dir;
  std::optional<long long> seed;
  bool deterministic = false;
  std::optional<std::string> resume;  // "auto" or a path
  std::vector<std::string> cfg_options;
  std::string launcher = "none";  // none | pytorch
};

struct TestArgs {
  std::string config;
  std::string checkpoint;
  std::optional<std::string> work_dir;
  std::vector<std::string> cfg_options;
  std::string launcher = "none";
  // --show-dir DIR [--show-count N] [--show-score-thr X]: a picture per evaluated frame.
  std::optional<std::string> show_dir;
  std::int64_t show_count = -1;  // -1: every frame
  double show_score_thr = 0.1;
  // --submission-dir DIR: the detections as KITTI result files (test_evaluator.submission_prefix).
  std::optional<std::string> submission_dir;
};

class UsageError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// `args` excludes the subcommand name. Throw UsageError.
TrainArgs parse_train_args(const std::vector<std::string>& args);
TestArgs parse_test_args(const std::vector<std::string>& args);

extern const char* const kTrainUsage;
extern const char* const kTestUsage;

// `KEY=VALUE` as a --cfg-options override that keeps VALUE a string: quoted, so that a
// directory named `null`, `123` or `a,b` is not read as YAML.
std::string string_override(const std::string& key, const std::string& value);
// `--work-dir PATH` as such an override of work_dir.
std::string work_dir_override(const std::string& path);

// The --cfg-options equivalent of the dedicated flags (work_dir=..., randomness.seed=..., ...),
// so the dumped config records them.
std::vector<std::string> train_overrides(const TrainArgs& args);

}  // namespace ddp3d::cli
