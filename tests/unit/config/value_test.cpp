// Scalar typing, float formatting and the YAML writer's round trip.
#include "worker/config/value.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "worker/config/yaml_io.h"

namespace ddp3d::config {
namespace {

Value::Kind kind_of(const char* text) {
  return resolve_plain_scalar(text, {}).kind();
}

TEST(ScalarTyping, FollowsYamlCoreSchema) {
  EXPECT_EQ(kind_of(""), Value::Kind::kNull);
  EXPECT_EQ(kind_of("~"), Value::Kind::kNull);
  EXPECT_EQ(kind_of("null"), Value::Kind::kNull);
  EXPECT_EQ(kind_of("true"), Value::Kind::kBool);
  EXPECT_EQ(kind_of("False"), Value::Kind::kBool);
  EXPECT_EQ(kind_of("42"), Value::Kind::kInt);
  EXPECT_EQ(kind_of("-7"), Value::Kind::kInt);
  EXPECT_EQ(kind_of("0x1F"), Value::Kind::kInt);
  EXPECT_EQ(kind_of("0.001"), Value::Kind::kFloat);
  EXPECT_EQ(kind_of("1e-4"), Value::Kind::kFloat);
  EXPECT_EQ(kind_of("-.inf"), Value::Kind::kFloat);
  EXPECT_EQ(kind_of("abc"), Value::Kind::kString);
  EXPECT_EQ(kind_of("yes"), Value::Kind::kString);  // YAML 1.1's bool words stay strings
  EXPECT_EQ(kind_of("1.2.3"), Value::Kind::kString);
  EXPECT_EQ(kind_of("v100"), Value::Kind::kString);
}

TEST(ScalarTyping, ParsesValues) {
  EXPECT_EQ(resolve_plain_scalar("0x1F", {}).as_int(), 31);
  EXPECT_EQ(resolve_plain_scalar("-9223372036854775808", {}).as_int(),
            std::numeric_limits<std::int64_t>::min());
  EXPECT_DOUBLE_EQ(resolve_plain_scalar("1e-4", {}).as_double(), 1e-4);
  EXPECT_DOUBLE_EQ(resolve_plain_scalar("+2.5", {}).as_double(), 2.5);
  EXPECT_TRUE(std::isinf(resolve_plain_scalar(".inf", {}).as_double()));
  // Beyond int64 it is still a number (a float), as YAML loaders do.
  EXPECT_EQ(kind_of("99999999999999999999"), Value::Kind::kFloat);
}

TEST(FormatDouble, RoundTripsAndStaysAFloat) {
  for (double d : {0.1, 1.0 / 9.0, 1e-7, 0.8947368421052632, 3.0, -1.5707963267948966, 1e21}) {
    const std::string text = format_double(d);
    const Value back = resolve_plain_scalar(text, {});
    ASSERT_EQ(back.kind(), Value::Kind::kFloat) << text;
    EXPECT_EQ(back.as_double(), d) << text;
  }
  EXPECT_EQ(format_double(3.0), "3.0");
}

TEST(YamlIo, QuotedScalarsStayStrings) {
  const Value v = parse_yaml("a: '1'\nb: \"true\"\nc: 1\nd: !!str 2\n", "t.yaml");
  EXPECT_EQ(v.find("a")->kind(), Value::Kind::kString);
  EXPECT_EQ(v.find("b")->kind(), Value::Kind::kString);
  EXPECT_EQ(v.find("c")->kind(), Value::Kind::kInt);
  EXPECT_EQ(v.find("d")->kind(), Value::Kind::kString);
}

TEST(YamlIo, RecordsLines) {
  const Value v = parse_yaml("a: 1\nb:\n  c: [1, 2]\n", "t.yaml");
  EXPECT_EQ(v.find("a")->origin().to_string(), "t.yaml:1");
  EXPECT_EQ(v.find("b")->find("c")->origin().to_string(), "t.yaml:3");
}

TEST(YamlIo, RejectsDuplicateKeysAndBadSyntax) {
  try {
    parse_yaml("a:\n  b: 1\n  b: 2\n", "dup.yaml");
    FAIL() << "no error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("dup.yaml:3: a.b: duplicate key"), std::string::npos)
        << e.what();
  }
  try {
    parse_yaml("a: [1, 2\n", "bad.yaml");
    FAIL() << "no error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("bad.yaml"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("invalid YAML"), std::string::npos) << e.what();
  }
}

TEST(YamlIo, WriterRoundTrips) {
  const char* text =
      "s: [\"true\", \"1.5\", \"\", plain, \"null\"]\n"
      "f: [1.0, 0.1111111111111111, 1.0e-07, -3.5]\n"
      "i: [1, -2, 30000]\n"
      "b: false\n"
      "n: null\n"
      "nested: {list: [{a: 1}, {b: [2, 3]}], empty: {}, empty_list: []}\n";
  const Value v = parse_yaml(text, "t.yaml");
  const std::string dumped = write_yaml(v);
  EXPECT_EQ(parse_yaml(dumped, "dump.yaml"), v) << dumped;
  // Floats keep a decimal point, strings that look like other types are quoted.
  EXPECT_NE(dumped.find("1.0"), std::string::npos) << dumped;
  EXPECT_NE(dumped.find("\"true\""), std::string::npos) << dumped;
}

}  // namespace
}  // namespace ddp3d::config
