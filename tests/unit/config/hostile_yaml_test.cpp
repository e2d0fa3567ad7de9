// Malformed config inputs that used to crash or hang the loader: cyclic and exponential YAML
// aliases, deep nesting, very long scalars, NaN/Inf values, and paths that are FIFOs,
// directories or devices. Each must end in a ConfigError naming the file (and line or key).
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "tests/unit/common/hostile_files.h"
#include "tests/unit/config/temp_dir.h"
#include "worker/config/loader.h"
#include "worker/config/value.h"
#include "worker/config/yaml_io.h"

namespace ddp3d::config {
namespace {

using testing::error_of;
using testing::kToyConfig;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(HostileYaml, ASelfReferencingAliasIsAnErrorNotAStackOverflow) {
  const std::string m =
      error_of([] { parse(std::string(kToyConfig) + "x: &a [1, *a]\n", "c.yaml"); });
  EXPECT_TRUE(contains(m, "c.yaml:")) << m;
  EXPECT_TRUE(contains(m, "nested deeper than 64 levels") || contains(m, "invalid YAML")) << m;
}

TEST(HostileYaml, AnAliasBombStopsAtTheNodeLimitQuickly) {
  // Nine levels of ten aliases: 10^9 values once expanded.
  std::string bomb = std::string(kToyConfig) + "l0: &l0 [lol]\n";
  for (int i = 1; i <= 9; ++i) {
    bomb += "l" + std::to_string(i) + ": &l" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) bomb += (k ? ", *l" : "*l") + std::to_string(i - 1);
    bomb += "]\n";
  }
  const auto start = std::chrono::steady_clock::now();
  const std::string m = error_of([&] { parse(bomb, "bomb.yaml"); });
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_TRUE(contains(m, "bomb.yaml:")) << m;
  EXPECT_TRUE(contains(m, "more than 100000 values once YAML aliases are expanded")) << m;
}

TEST(HostileYaml, DeepNestingIsAnErrorNamingTheLine) {
  for (const int depth : {100, 100000}) {
    const std::string nested = std::string(depth, '[') + std::string(depth, ']');
    const std::string m = error_of([&] { parse("x: " + nested + "\n", "deep.yaml"); });
    EXPECT_TRUE(contains(m, "deep.yaml:1")) << depth << ": " << m;
  }
}

TEST(HostileYaml, AVeryLongNumberIsTypedWithoutRecursion) {
  // std::regex recursed once per character: a scalar this long overflowed the stack.
  const std::string digits(1000000, '7');
  EXPECT_EQ(resolve_plain_scalar(digits, {}).kind(), Value::Kind::kString);  // beyond a double
  EXPECT_EQ(resolve_plain_scalar("0." + digits, {}).kind(), Value::Kind::kFloat);
  EXPECT_EQ(resolve_plain_scalar(std::string(300, '1'), {}).kind(), Value::Kind::kFloat);
  EXPECT_EQ(resolve_plain_scalar("-" + std::string(5000, '9') + "e-9", {}).kind(),
            Value::Kind::kString);
  const std::string m =
      error_of([&] { parse(kToyConfig, "toy.yaml", {"optim_wrapper.optimizer.lr=" + digits}); });
  EXPECT_TRUE(contains(m, "optim_wrapper.optimizer.lr: expected a number")) << m.substr(0, 200);
}

TEST(HostileYaml, ScalarTypingStillFollowsTheCoreSchema) {
  EXPECT_EQ(resolve_plain_scalar("0x1F", {}).as_int(), 31);
  EXPECT_EQ(resolve_plain_scalar("-0o17", {}).as_int(), -15);
  EXPECT_DOUBLE_EQ(resolve_plain_scalar("+.5e1", {}).as_double(), 5.0);
  EXPECT_DOUBLE_EQ(resolve_plain_scalar("3.", {}).as_double(), 3.0);
  EXPECT_EQ(resolve_plain_scalar("-.inf", {}).as_double(),
            -std::numeric_limits<double>::infinity());
  EXPECT_EQ(resolve_plain_scalar("1e", {}).kind(), Value::Kind::kString);
  EXPECT_EQ(resolve_plain_scalar(".", {}).kind(), Value::Kind::kString);
  EXPECT_EQ(resolve_plain_scalar("0x", {}).kind(), Value::Kind::kString);
  EXPECT_EQ(resolve_plain_scalar("+-1", {}).kind(), Value::Kind::kString);
  EXPECT_EQ(resolve_plain_scalar("Null", {}).kind(), Value::Kind::kNull);
  EXPECT_EQ(resolve_plain_scalar("", {}).kind(), Value::Kind::kNull);
  EXPECT_EQ(resolve_plain_scalar("FALSE", {}).kind(), Value::Kind::kBool);
}

TEST(HostileYaml, NanAndInfinityAreRejectedWhereANumberIsExpected) {
  for (const char* bad : {".nan", ".inf", "-.inf"}) {
    const std::string m = error_of(
        [&] { parse(kToyConfig, "toy.yaml", {std::string("optim_wrapper.optimizer.lr=") + bad}); });
    EXPECT_TRUE(contains(m, "optim_wrapper.optimizer.lr: must be a finite number")) << m;
  }
}

TEST(HostileYaml, ConfigPathsThatAreNotRegularFiles) {
  ddp3d::testing::ScratchDir dir;
  const std::string dev = error_of([] { load("/dev/zero"); });
  EXPECT_TRUE(contains(dev, "/dev/zero: config file is a character device")) << dev;
  const std::string folder = error_of([&] { load(dir.root()); });
  EXPECT_TRUE(contains(folder, "config file is a directory")) << folder;
  const auto fifo = dir.fifo("pipe.yaml");
  const std::string m = ddp3d::testing::message_within([&] { load(fifo); }, fifo);
  EXPECT_TRUE(contains(m, fifo.string() + ": config file is a FIFO")) << m;
  const auto sparse = dir.sparse("huge.yaml", std::uint64_t{1} << 36);
  const std::string big = error_of([&] { load(sparse); });
  EXPECT_TRUE(contains(big, "huge.yaml: config file is 68719476736 bytes, over the limit")) << big;
  // A base that is a FIFO: named, not waited for.
  dir.write("top.yaml", "_base_: pipe.yaml\n");
  const std::string base =
      ddp3d::testing::message_within([&] { load(dir.path("top.yaml")); }, fifo);
  EXPECT_TRUE(contains(base, "config file is a FIFO")) << base;
}

// `keys` lines "k<i>: <i>", then `tail` (benchmarks/config times how this scales).
std::string flat_mapping(int keys, const std::string& tail = "") {
  std::string text;
  for (int i = 0; i < keys; ++i) text += "k" + std::to_string(i) + ": " + std::to_string(i) + "\n";
  return text + tail;
}

TEST(HostileYaml, AHugeMappingLoadsWholeAndADuplicateAtItsEndIsStillFound) {
  // The largest flat mapping the node limit admits: the mapping itself is one of the 100000.
  constexpr int kKeys = 99999;
  testing::TempDir dir;
  const Value tree = load_tree(dir.write("big.yaml", flat_mapping(kKeys)), "big.yaml");
  ASSERT_EQ(tree.entries().size(), static_cast<std::size_t>(kKeys));
  EXPECT_EQ(tree.entries().front().first, "k0");
  EXPECT_EQ(tree.entries().back().first, "k" + std::to_string(kKeys - 1));
  EXPECT_EQ(tree.find("k77777")->as_int(), 77777);
  EXPECT_EQ(tree.entries().back().second.origin().to_string(), "big.yaml:" + std::to_string(kKeys));

  // The duplicate of the second key, on the last line.
  const std::string dup =
      error_of([&] { parse_yaml(flat_mapping(kKeys - 1, "k1: 2\n"), "dup.yaml"); });
  EXPECT_TRUE(contains(dup, "dup.yaml:" + std::to_string(kKeys) + ": k1: duplicate key")) << dup;
  // One key more is past the node limit: an error, not a slow load.
  const std::string over = error_of([&] { parse_yaml(flat_mapping(kKeys + 1), "over.yaml"); });
  EXPECT_TRUE(contains(over, "over.yaml:")) << over;
  EXPECT_TRUE(contains(over, "more than 100000 values")) << over;
}

}  // namespace
}  // namespace ddp3d::config
