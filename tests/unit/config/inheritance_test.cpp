// `_base_` inheritance: single, list (in order), nested, `_delete_`, lists replaced wholesale,
// origins that point at the file that set each value, and the chain errors.
#include <gtest/gtest.h>

#include "tests/unit/config/temp_dir.h"
#include "worker/config/loader.h"
#include "worker/config/merge.h"
#include "worker/config/yaml_io.h"

namespace ddp3d::config {
namespace {

using testing::error_of;
using testing::TempDir;

Value tree(const TempDir& dir, const std::string& file) {
  return load_tree(dir.path(file), dir.path(file));
}

TEST(Inheritance, SingleBaseMergesMappingsDeeply) {
  TempDir dir;
  dir.write("base.yaml", "a: {x: 1, y: 2, z: {p: 1}}\nkeep: base\n");
  dir.write("child.yaml", "_base_: base.yaml\na: {y: 20, z: {q: 2}}\nnew: 3\n");
  const Value v = tree(dir, "child.yaml");
  EXPECT_EQ(v, parse_yaml("a: {x: 1, y: 20, z: {p: 1, q: 2}}\nkeep: base\nnew: 3\n", "e"));
}

TEST(Inheritance, ListOfBasesMergesInOrderThenTheFile) {
  TempDir dir;
  dir.write("_base_/one.yaml", "v: one\nonly_one: 1\nshared: {a: 1}\n");
  dir.write("_base_/two.yaml", "v: two\nonly_two: 2\nshared: {b: 2}\n");
  dir.write("cfgs/child.yaml",
            "_base_: [../_base_/one.yaml, ../_base_/two.yaml]\nshared: {c: 3}\n");
  const Value v = tree(dir, "cfgs/child.yaml");
  EXPECT_EQ(v.find("v")->as_string(), "two");  // the later base wins
  EXPECT_EQ(*v.find("shared"), parse_yaml("{a: 1, b: 2, c: 3}", "e"));
  EXPECT_NE(v.find("only_one"), nullptr);
  EXPECT_NE(v.find("only_two"), nullptr);
  EXPECT_EQ(v.find("_base_"), nullptr);
}

TEST(Inheritance, NestedBasesResolveRelativeToEachFile) {
  TempDir dir;
  dir.write("a/root.yaml", "level: root\nfrom_root: 1\n");
  dir.write("a/b/mid.yaml", "_base_: ../root.yaml\nlevel: mid\nfrom_mid: 2\n");
  dir.write("c/top.yaml", "_base_: ../a/b/mid.yaml\nlevel: top\n");
  const Value v = tree(dir, "c/top.yaml");
  EXPECT_EQ(v, parse_yaml("level: top\nfrom_root: 1\nfrom_mid: 2\n", "e"));
}

TEST(Inheritance, ListsAreReplacedWholesale) {
  TempDir dir;
  dir.write("base.yaml", "xs: [1, 2, 3]\nitems: [{a: 1}, {b: 2}]\n");
  dir.write("child.yaml", "_base_: base.yaml\nxs: [9]\nitems: [{c: 3}]\n");
  EXPECT_EQ(tree(dir, "child.yaml"), parse_yaml("xs: [9]\nitems: [{c: 3}]\n", "e"));
}

TEST(Inheritance, DeleteReplacesTheBaseMapping) {
  TempDir dir;
  dir.write("base.yaml", "m: {a: 1, b: 2, sub: {x: 1}}\nother: {k: 1}\n");
  dir.write("child.yaml",
            "_base_: base.yaml\nm: {_delete_: true, c: 3}\nother: {_delete_: false, j: 2}\n");
  const Value v = tree(dir, "child.yaml");
  EXPECT_EQ(*v.find("m"), parse_yaml("{c: 3}", "e"));            // replaced
  EXPECT_EQ(*v.find("other"), parse_yaml("{k: 1, j: 2}", "e"));  // merged
}

TEST(Inheritance, DeleteNeverSurvivesAndMustBeABool) {
  TempDir dir;
  dir.write("solo.yaml", "m: {_delete_: true, deep: {_delete_: true, x: 1}}\n");
  EXPECT_EQ(tree(dir, "solo.yaml"), parse_yaml("m: {deep: {x: 1}}", "e"));
  dir.write("bad.yaml", "m:\n  _delete_: yes\n");
  const std::string msg = error_of([&] { tree(dir, "bad.yaml"); });
  EXPECT_NE(msg.find(dir.path("bad.yaml") + ":2: m._delete_: expected true or false"),
            std::string::npos)
      << msg;
}

TEST(Inheritance, OriginsNameTheFileThatSetTheValue) {
  TempDir dir;
  dir.write("base.yaml", "a:\n  x: 1\n  y: 2\n");
  dir.write("child.yaml", "_base_: base.yaml\na:\n  y: 3\n");
  const Value v = tree(dir, "child.yaml");
  EXPECT_EQ(v.find("a")->find("x")->origin().to_string(), dir.path("base.yaml") + ":2");
  EXPECT_EQ(v.find("a")->find("y")->origin().to_string(), dir.path("child.yaml") + ":3");
}

TEST(Inheritance, BaseNamesAreShownRelativeToTheConfigAsGiven) {
  TempDir dir;
  dir.write("_base_/b.yaml", "x: 1\n");
  dir.write("cfgs/c.yaml", "_base_: ../_base_/b.yaml\n");
  const Value v = tree(dir, "cfgs/c.yaml");
  // "<dir>/cfgs/../_base_/b.yaml" is shown normalised.
  EXPECT_EQ(v.find("x")->origin().to_string(), dir.path("_base_/b.yaml") + ":1");
}

TEST(Inheritance, MissingBaseNamesTheChain) {
  TempDir dir;
  dir.write("mid.yaml", "x: 1\n_base_: [gone.yaml]\n");
  dir.write("top.yaml", "_base_: mid.yaml\n");
  const std::string msg = error_of([&] { tree(dir, "top.yaml"); });
  EXPECT_NE(
      msg.find(dir.path("mid.yaml") + ":2: _base_: base file not found: " + dir.path("gone.yaml")),
      std::string::npos)
      << msg;
  EXPECT_NE(msg.find("via " + dir.path("top.yaml") + " -> " + dir.path("mid.yaml") + " -> " +
                     dir.path("gone.yaml")),
            std::string::npos)
      << msg;
}

TEST(Inheritance, MissingTopFileIsAnError) {
  TempDir dir;
  const std::string msg = error_of([&] { tree(dir, "nope.yaml"); });
  EXPECT_NE(msg.find(dir.path("nope.yaml") + ": config file not found"), std::string::npos) << msg;
}

TEST(Inheritance, CycleNamesTheChain) {
  TempDir dir;
  dir.write("a.yaml", "_base_: b.yaml\n");
  dir.write("b.yaml", "_base_: c.yaml\n");
  dir.write("c.yaml", "_base_: ./a.yaml\n");
  const std::string msg = error_of([&] { tree(dir, "a.yaml"); });
  EXPECT_NE(
      msg.find(dir.path("c.yaml") + ":1: _base_: cycle in _base_: " + dir.path("a.yaml") + " -> " +
               dir.path("b.yaml") + " -> " + dir.path("c.yaml") + " -> " + dir.path("a.yaml")),
      std::string::npos)
      << msg;
}

TEST(Inheritance, SelfCycleAndBadBaseEntries) {
  TempDir dir;
  dir.write("self.yaml", "_base_: self.yaml\n");
  EXPECT_NE(error_of([&] { tree(dir, "self.yaml"); }).find("cycle in _base_"), std::string::npos);
  dir.write("num.yaml", "_base_: [ok.yaml, 3]\n");
  dir.write("ok.yaml", "x: 1\n");
  EXPECT_NE(error_of([&] {
              tree(dir, "num.yaml");
            }).find(dir.path("num.yaml") + ":1: _base_: expected a file path, got 3"),
            std::string::npos);
  dir.write("list.yaml", "- 1\n- 2\n");
  EXPECT_NE(error_of([&] { tree(dir, "list.yaml"); }).find("a config file must be a mapping"),
            std::string::npos);
}

TEST(Inheritance, DiamondIsNotACycle) {
  TempDir dir;
  dir.write("root.yaml", "r: 1\n");
  dir.write("left.yaml", "_base_: root.yaml\nl: 1\n");
  dir.write("right.yaml", "_base_: root.yaml\nr: 2\n");
  dir.write("top.yaml", "_base_: [left.yaml, right.yaml]\n");
  EXPECT_EQ(tree(dir, "top.yaml"), parse_yaml("r: 2\nl: 1\n", "e"));
}

}  // namespace
}  // namespace ddp3d::config
