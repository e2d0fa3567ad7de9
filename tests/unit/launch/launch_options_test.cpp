#include "worker/launch/launch_options.h"

#include <gtest/gtest.h>

namespace ddp3d::launch {
namespace {

using Env = std::map<std::string, std::string>;

TEST(LaunchOptions, DefaultsAreTheSeeds) {
  const auto o = parse_launch_options({"prog"}, {});
  EXPECT_EQ(o.nnodes, 1);
  EXPECT_EQ(o.node_rank, 0);
  EXPECT_EQ(o.master_addr, "127.0.0.1");
  EXPECT_EQ(o.master_port, 29500);
  EXPECT_EQ(o.nproc_per_node, 1);
  EXPECT_EQ(o.command, std::vector<std::string>{"prog"});
}

TEST(LaunchOptions, EnvironmentGivesTheDefaults) {
  const Env env{{"NNODES", "2"},
                {"NODE_RANK", "1"},
                {"MASTER_ADDR", "10.1.2.3"},
                {"PORT", "29600"},
                {"GPUS", "4"}};
  const auto o = parse_launch_options({"ddp3d", "train", "cfg.yaml"}, env);
  EXPECT_EQ(o.nnodes, 2);
  EXPECT_EQ(o.node_rank, 1);
  EXPECT_EQ(o.master_addr, "10.1.2.3");
  EXPECT_EQ(o.master_port, 29600);
  EXPECT_EQ(o.nproc_per_node, 4);
  EXPECT_EQ(o.world_size(), 8);
  EXPECT_EQ(o.command.size(), 3u);
}

TEST(LaunchOptions, PortWinsOverMasterPortAndFlagsWinOverEnvironment) {
  const Env env{{"PORT", "30000"}, {"MASTER_PORT", "31000"}, {"NNODES", "4"}};
  const auto o = parse_launch_options(
      {"--nnodes", "2", "--master-port", "32000", "--nproc-per-node", "3", "--", "x"}, env);
  EXPECT_EQ(o.nnodes, 2);
  EXPECT_EQ(o.master_port, 32000);
  EXPECT_EQ(o.nproc_per_node, 3);
  EXPECT_EQ(parse_launch_options({"x"}, env).master_port, 30000);
}

TEST(LaunchOptions, AcceptsFlagEqualsValueAsDistTrainShPassesIt) {
  const auto o = parse_launch_options(
      {"--nnodes=2", "--node-rank=1", "--master-addr=10.0.0.1", "--nproc-per-node=4",
       "--master-port=29600", "--", "prog", "--work-dir=x"},
      {});
  EXPECT_EQ(o.nnodes, 2);
  EXPECT_EQ(o.node_rank, 1);
  EXPECT_EQ(o.master_addr, "10.0.0.1");
  EXPECT_EQ(o.nproc_per_node, 4);
  EXPECT_EQ(o.master_port, 29600);
  // Arguments after the program are the program's, untouched.
  EXPECT_EQ(o.command, (std::vector<std::string>{"prog", "--work-dir=x"}));
}

TEST(LaunchOptions, GpusZeroMeansOneCpuProcess) {
  const auto o = parse_launch_options({"x"}, {{"GPUS", "0"}});
  EXPECT_EQ(o.nproc_per_node, 1);
  EXPECT_EQ(o.gpus, 0);
}

TEST(LaunchOptions, BadInputNamesTheFlagOrVariable) {
  auto message = [](const std::vector<std::string>& args, const Env& env) {
    try {
      parse_launch_options(args, env);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({"x"}, {{"PORT", "70000"}}).find("PORT: '70000'"), std::string::npos);
  EXPECT_NE(message({"x"}, {{"NNODES", "two"}}).find("NNODES"), std::string::npos);
  EXPECT_NE(message({"--nproc-per-node", "0", "x"}, {}).find("--nproc-per-node"),
            std::string::npos);
  EXPECT_NE(message({"--bogus", "x"}, {}).find("unknown flag --bogus"), std::string::npos);
  EXPECT_NE(message({"--nnodes"}, {}).find("--nnodes needs a value"), std::string::npos);
  EXPECT_NE(message({}, {}).find("no program"), std::string::npos);
  EXPECT_NE(message({"x"}, {{"NNODES", "2"}, {"NODE_RANK", "2"}}).find("NODE_RANK 2"),
            std::string::npos);
}

TEST(LaunchOptions, RankEnvironmentFollowsTorchrun) {
  const auto o = parse_launch_options(
      {"x"}, {{"NNODES", "2"}, {"NODE_RANK", "1"}, {"GPUS", "2"}, {"MASTER_ADDR", "m"}});
  const auto env = rank_environment(o, 1);
  EXPECT_EQ(env.at("RANK"), "3");
  EXPECT_EQ(env.at("LOCAL_RANK"), "1");
  EXPECT_EQ(env.at("LOCAL_WORLD_SIZE"), "2");
  EXPECT_EQ(env.at("WORLD_SIZE"), "4");
  EXPECT_EQ(env.at("GROUP_RANK"), "1");
  EXPECT_EQ(env.at("MASTER_ADDR"), "m");
  EXPECT_EQ(env.at("MASTER_PORT"), "29500");
}

}  // namespace
}  // namespace ddp3d::launch
