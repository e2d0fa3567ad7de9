#include "common/parse_number.h"

#include <charconv>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace ddp3d {
namespace {

std::string show(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

[[noreturn]] void fail(std::string_view flag, std::string_view text, const std::string& wanted) {
  throw std::invalid_argument(std::string(flag) + ": expected " + wanted + ", got '" +
                              std::string(text.substr(0, 64)) + (text.size() > 64 ? "...'" : "'"));
}

}  // namespace

std::int64_t parse_integer(std::string_view flag, std::string_view text, std::int64_t min,
                           std::int64_t max) {
  const std::string wanted =
      "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
  std::string_view digits = text;
  if (digits.starts_with('+')) digits.remove_prefix(1);  // from_chars rejects a leading '+'
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (digits.empty() || digits.starts_with('-') != text.starts_with('-') || ec != std::errc() ||
      end != digits.data() + digits.size() || v < min || v > max) {
    fail(flag, text, wanted);
  }
  return v;
}

std::uint64_t parse_unsigned(std::string_view flag, std::string_view text, std::uint64_t min,
                             std::uint64_t max) {
  const std::string wanted =
      "an unsigned integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || v < min || v > max) {
    fail(flag, text, wanted);
  }
  return v;
}

double parse_real(std::string_view flag, std::string_view text, double min, double max) {
  const std::string wanted = "a number in [" + show(min) + ", " + show(max) + "]";
  std::string_view digits = text;
  if (digits.starts_with('+')) digits.remove_prefix(1);
  double v = 0;
  // chars_format::general: fixed or exponent, never hex, "nan" or "inf" spelled out.
  const auto [end, ec] =
      std::from_chars(digits.data(), digits.data() + digits.size(), v, std::chars_format::general);
  if (digits.empty() || digits.starts_with('-') != text.starts_with('-') || ec != std::errc() ||
      end != digits.data() + digits.size() || !std::isfinite(v) || v < min || v > max) {
    fail(flag, text, wanted);
  }
  return v;
}

}  // namespace ddp3d
