// Command-line and environment numbers, parsed completely and range-checked: "12abc", "",
// " 5", "nan", "inf", "1e999", "-1" where a count is wanted, and values past the range all
// fail with std::invalid_argument naming the flag, the text and the accepted range.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ddp3d {

// A decimal integer (optional sign) in [min, max].
std::int64_t parse_integer(std::string_view flag, std::string_view text, std::int64_t min,
                           std::int64_t max);

// A decimal unsigned integer in [min, max] (no sign at all: "-1" is not 2^64 - 1).
std::uint64_t parse_unsigned(std::string_view flag, std::string_view text, std::uint64_t min,
                             std::uint64_t max);

// A finite decimal number in [min, max] (fixed or exponent notation; NaN and infinities fail).
double parse_real(std::string_view flag, std::string_view text, double min, double max);

}  // namespace ddp3d
