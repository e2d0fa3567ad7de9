#include "worker/cli/cli_args.h"

#include <gtest/gtest.h>

namespace ddp3d::cli {
namespace {

// The UsageError message `parse(args)` throws, or "no error".
template <typename Parse>
std::string usage_error_of(Parse parse, const std::vector<std::string>& args) {
  try {
    parse(args);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "no error";
}

TEST(TrainArgs, ParsesEveryFlag) {
  const TrainArgs a =
      parse_train_args({"cfg.yaml", "--work-dir", "w", "--seed", "7", "--deterministic", "--resume",
                        "--cfg-options", "a.b=1", "c=[1, 2]", "--launcher", "pytorch"});
  EXPECT_EQ(a.config, "cfg.yaml");
  EXPECT_EQ(*a.work_dir, "w");
  EXPECT_EQ(*a.seed, 7);
  EXPECT_TRUE(a.deterministic);
  EXPECT_EQ(*a.resume, "auto");
  EXPECT_EQ(a.cfg_options, (std::vector<std::string>{"a.b=1", "c=[1, 2]"}));
  EXPECT_EQ(a.launcher, "pytorch");
  EXPECT_EQ(train_overrides(a),
            (std::vector<std::string>{"a.b=1", "c=[1, 2]", "work_dir=\"w\"", "randomness.seed=7",
                                      "randomness.deterministic=true"}));
}

TEST(TrainArgs, ResumeTakesAnOptionalValue) {
  EXPECT_EQ(*parse_train_args({"c.yaml", "--resume", "auto"}).resume, "auto");
  EXPECT_EQ(*parse_train_args({"c.yaml", "--resume", "w/epoch_2.pth"}).resume, "w/epoch_2.pth");
  EXPECT_EQ(*parse_train_args({"c.yaml", "--resume"}).resume, "auto");
  const TrainArgs a = parse_train_args({"--resume", "c.yaml"});  // CONFIG is not swallowed
  EXPECT_EQ(a.config, "c.yaml");
  EXPECT_EQ(*a.resume, "auto");
  EXPECT_FALSE(parse_train_args({"c.yaml"}).resume.has_value());
}

TEST(TrainArgs, ErrorsNameTheFlag) {
  auto message = [](std::vector<std::string> args) {
    return usage_error_of(parse_train_args, args);
  };
  EXPECT_NE(message({"c.yaml", "--seed", "x"}).find("--seed"), std::string::npos);
  EXPECT_NE(message({"c.yaml", "--launcher", "slurm"}).find("--launcher"), std::string::npos);
  EXPECT_NE(message({"c.yaml", "--bogus"}).find("--bogus"), std::string::npos);
  EXPECT_NE(message({}).find("CONFIG"), std::string::npos);
  EXPECT_NE(message({"c.yaml", "--cfg-options", "novalue"}).find("key=value"), std::string::npos);
}

TEST(TestArgs, NeedsConfigAndCheckpoint) {
  const TestArgs a = parse_test_args({"c.yaml", "w/epoch_1.pth", "--launcher", "pytorch"});
  EXPECT_EQ(a.checkpoint, "w/epoch_1.pth");
  EXPECT_EQ(a.launcher, "pytorch");
  EXPECT_THROW(parse_test_args({"c.yaml"}), UsageError);
  EXPECT_FALSE(a.show_dir);
}

TEST(TestArgs, ShowDirCountAndScoreThreshold) {
  const TestArgs a = parse_test_args(
      {"c.yaml", "e.pth", "--show-dir", "pics", "--show-count", "5", "--show-score-thr", "0.25"});
  EXPECT_EQ(a.show_dir, "pics");
  EXPECT_EQ(a.show_count, 5);
  EXPECT_DOUBLE_EQ(a.show_score_thr, 0.25);
  const TestArgs d = parse_test_args({"c.yaml", "e.pth", "--show-dir", "pics"});
  EXPECT_EQ(d.show_count, -1);  // every frame
  EXPECT_DOUBLE_EQ(d.show_score_thr, 0.1);
  auto message = [](std::vector<std::string> args) {
    return usage_error_of(parse_test_args, args);
  };
  EXPECT_NE(message({"c.yaml", "e.pth", "--show-count", "3"}).find("need --show-dir"),
            std::string::npos);
  EXPECT_NE(
      message({"c.yaml", "e.pth", "--show-dir", "p", "--show-count", "-1"}).find("--show-count"),
      std::string::npos);
  EXPECT_NE(
      message({"c.yaml", "e.pth", "--show-dir", "p", "--show-count", "1e99"}).find("--show-count"),
      std::string::npos);
  EXPECT_NE(message({"c.yaml", "e.pth", "--show-dir", "p", "--show-score-thr", "nan"})
                .find("--show-score-thr"),
            std::string::npos);
  EXPECT_NE(message({"c.yaml", "e.pth", "--show-dir", "p", "--show-score-thr", "1.5"})
                .find("--show-score-thr"),
            std::string::npos);
  EXPECT_NE(message({"c.yaml", "e.pth", "--show-dir", ""}).find("--show-dir"), std::string::npos);
  EXPECT_NE(message({"c.yaml", "e.pth", "--show-dir"}).find("needs a value"), std::string::npos);
}

TEST(TestArgs, SubmissionDirBecomesAQuotedStringOverride) {
  const TestArgs a = parse_test_args({"c.yaml", "e.pth", "--submission-dir", "out/null"});
  EXPECT_EQ(a.submission_dir, "out/null");
  EXPECT_EQ(string_override("test_evaluator.submission_prefix", "null"),
            "test_evaluator.submission_prefix=\"null\"");
  EXPECT_EQ(string_override("k", "a\"b"), "k=\"a\\x22b\"");
  EXPECT_THROW(parse_test_args({"c.yaml", "e.pth", "--submission-dir", ""}), UsageError);
}

}  // namespace
}  // namespace ddp3d::cli
