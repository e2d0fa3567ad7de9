#include "operator/controller/progress_metrics.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <system_error>

namespace ddp3d::op::controller {

namespace {

// Steps are counted in doubles by Prometheus; above 2^53 they are no longer exact integers.
constexpr double kMaxExactInteger = 9007199254740992.0;

bool is_space(char c) {
  return c == ' ' || c == '\t';
}

bool name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
}

bool name_char(char c) {
  return name_start(c) || (c >= '0' && c <= '9');
}

// A cursor over one line; every step returns false on malformed input (the line is skipped).
class Line {
 public:
  explicit Line(std::string_view s) : s_(s) {}

  void skip_space() {
    while (i_ < s_.size() && is_space(s_[i_])) ++i_;
  }
  bool at_end() const { return i_ >= s_.size(); }
  char peek() const { return at_end() ? '\0' : s_[i_]; }

  bool name(std::string_view* out) {
    const size_t start = i_;
    if (at_end() || !name_start(s_[i_])) return false;
    while (i_ < s_.size() && name_char(s_[i_])) ++i_;
    *out = s_.substr(start, i_ - start);
    return true;
  }

  // {a="x",b="y\"z"} with optional trailing comma; the values are not needed, only skipped
  // correctly (an escaped quote or a '}' inside a value must not end the set).
  bool skip_labels() {
    ++i_;  // '{'
    for (;;) {
      skip_space();
      if (peek() == '}') {
        ++i_;
        return true;
      }
      std::string_view label;
      if (!name(&label)) return false;
      skip_space();
      if (peek() != '=') return false;
      ++i_;
      skip_space();
      if (peek() != '"') return false;
      ++i_;
      for (;;) {
        if (at_end()) return false;
        const char c = s_[i_++];
        if (c == '"') break;
        if (c == '\\') {
          if (at_end()) return false;
          ++i_;  // \\, \", \n: the escaped character is part of the value
        }
      }
      skip_space();
      if (peek() == ',') {
        ++i_;
      } else if (peek() != '}') {
        return false;
      }
    }
  }

  std::string_view token() {
    const size_t start = i_;
    while (i_ < s_.size() && !is_space(s_[i_])) ++i_;
    return s_.substr(start, i_ - start);
  }

 private:
  std::string_view s_;
  size_t i_ = 0;
};

// A finite, non-negative, exactly representable count; "NaN", "+Inf", "1e400", "-1", "5x"
// are not.
std::optional<double> count_value(std::string_view token) {
  if (token.empty()) return std::nullopt;
  if (token.front() == '+') token.remove_prefix(1);
  double v = 0;
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), v);
  if (ec != std::errc() || end != token.data() + token.size()) return std::nullopt;
  if (!std::isfinite(v) || v < 0 || v > kMaxExactInteger) return std::nullopt;
  return v;
}

// Sample line -> (name, value) when well formed.
bool parse_sample(std::string_view text, std::string_view* name, double* value) {
  Line line(text);
  line.skip_space();
  if (line.at_end() || line.peek() == '#') return false;
  if (!line.name(name)) return false;
  line.skip_space();
  if (line.peek() == '{' && !line.skip_labels()) return false;
  line.skip_space();
  const auto v = count_value(line.token());
  if (!v) return false;
  line.skip_space();
  if (!line.at_end()) {
    // An optional integer timestamp, then nothing.
    const std::string_view ts = line.token();
    int64_t t = 0;
    const auto [end, ec] = std::from_chars(ts.data(), ts.data() + ts.size(), t);
    if (ec != std::errc() || end != ts.data() + ts.size()) return false;
    line.skip_space();
    if (!line.at_end()) return false;
  }
  *value = *v;
  return true;
}

}  // namespace

ProgressMetrics parse_progress_metrics(std::string_view text) {
  ProgressMetrics out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    std::string_view name;
    double value = 0;
    if (!parse_sample(line, &name, &value)) continue;
    std::optional<double>* slot = nullptr;
    if (name == kStepsSeries) {
      slot = &out.steps;
    } else if (name == kEpochSeries) {
      slot = &out.epoch;
    } else if (name == kMaxStepsSeries) {
      slot = &out.max_steps;
    }
    if (slot && !*slot) *slot = value;
  }
  return out;
}

}  // namespace ddp3d::op::controller
