#include "common/parse_number.h"

#include <gtest/gtest.h>

#include <limits>
#include <stdexcept>
#include <string>

namespace ddp3d {
namespace {

std::string integer_error(const std::string& text) {
  try {
    parse_integer("--scenes", text, 1, 1000);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}

TEST(ParseInteger, TakesWholeDecimalNumbersInRange) {
  EXPECT_EQ(parse_integer("--n", "42", 1, 1000), 42);
  EXPECT_EQ(parse_integer("--n", "+7", 1, 1000), 7);
  EXPECT_EQ(parse_integer("--n", "-3", -5, 5), -3);
  EXPECT_EQ(
      parse_integer("--n", "9223372036854775807", 0, std::numeric_limits<std::int64_t>::max()),
      std::numeric_limits<std::int64_t>::max());
}

TEST(ParseInteger, RejectsGarbageNamingTheFlagAndRange) {
  for (const char* bad : {"", " 5", "5 ", "12abc", "0x10", "1e3", "nan", "inf", "-1", "0", "1001",
                          "99999999999999999999", "+-5", "--5", "5.0"}) {
    const std::string m = integer_error(bad);
    EXPECT_EQ(m.rfind("--scenes: expected an integer in [1, 1000], got '", 0), 0u)
        << "'" << bad << "' -> " << m;
  }
}

TEST(ParseUnsigned, RejectsASignInsteadOfWrappingAround) {
  EXPECT_EQ(parse_unsigned("--seed", "18446744073709551615", 0,
                           std::numeric_limits<std::uint64_t>::max()),
            std::numeric_limits<std::uint64_t>::max());
  for (const char* bad : {"-1", "+1", "", "18446744073709551616", "1x"}) {
    EXPECT_THROW(parse_unsigned("--seed", bad, 0, std::numeric_limits<std::uint64_t>::max()),
                 std::invalid_argument)
        << bad;
  }
}

TEST(ParseReal, TakesFiniteNumbersInRange) {
  EXPECT_DOUBLE_EQ(parse_real("--timeout", "1.5", 0, 10), 1.5);
  EXPECT_DOUBLE_EQ(parse_real("--timeout", "2e-1", 0, 10), 0.2);
  EXPECT_DOUBLE_EQ(parse_real("--timeout", "+3", 0, 10), 3);
}

TEST(ParseReal, RejectsNanInfinitiesHugeNegativeAndTrailingGarbage) {
  for (const char* bad : {"nan", "NaN", "-nan", "inf", "-inf", "infinity", "1e999", "1e308", "-1",
                          "5s", "", ".", "0x1p3", " 1", "+-1", "10.0001"}) {
    try {
      parse_real("--timeout", bad, 0, 10);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()).rfind("--timeout: expected a number in [0, 10], got '", 0),
                0u)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace ddp3d
