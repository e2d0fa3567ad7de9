#include "worker/data/strict_number.h"

#include <charconv>
#include <cmath>

namespace ddp3d::data {

std::optional<double> parse_bounded_number(std::string_view token, double min, double max) {
  std::string_view digits = token;
  if (digits.starts_with('+')) {
    digits.remove_prefix(1);  // from_chars takes no '+'; "+-1" stays invalid
    if (digits.starts_with('-') || digits.starts_with('+')) return std::nullopt;
  }
  if (digits.empty()) return std::nullopt;
  double v = 0;
  const auto [end, ec] =
      std::from_chars(digits.data(), digits.data() + digits.size(), v, std::chars_format::general);
  if (ec != std::errc() || end != digits.data() + digits.size() || !std::isfinite(v) || v < min ||
      v > max) {
    return std::nullopt;
  }
  return v;
}

}  // namespace ddp3d::data
