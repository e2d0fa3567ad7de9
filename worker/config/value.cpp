#include "worker/config/value.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <initializer_list>
#include <limits>

namespace ddp3d::config {

std::string Origin::to_string() const {
  if (line > 0) return file + ":" + std::to_string(line);
  return file;
}

Value Value::null(Origin o) {
  Value v;
  v.origin_ = std::move(o);
  return v;
}
Value Value::boolean(bool b, Origin o) {
  Value v = null(std::move(o));
  v.kind_ = Kind::kBool;
  v.b_ = b;
  return v;
}
Value Value::integer(std::int64_t i, Origin o) {
  Value v = null(std::move(o));
  v.kind_ = Kind::kInt;
  v.i_ = i;
  return v;
}
Value Value::real(double d, Origin o) {
  Value v = null(std::move(o));
  v.kind_ = Kind::kFloat;
  v.d_ = d;
  return v;
}
Value Value::string(std::string s, Origin o) {
  Value v = null(std::move(o));
  v.kind_ = Kind::kString;
  v.s_ = std::move(s);
  return v;
}
Value Value::list(std::vector<Value> items, Origin o) {
  Value v = null(std::move(o));
  v.kind_ = Kind::kList;
  v.items_ = std::move(items);
  return v;
}
Value Value::map(std::vector<Entry> entries, Origin o) {
  Value v = null(std::move(o));
  v.kind_ = Kind::kMap;
  v.entries_ = std::move(entries);
  return v;
}

const Value* Value::find(std::string_view key) const {
  if (kind_ != Kind::kMap) return nullptr;
  for (const auto& [k, v] : entries_) {
    if (k == key) return &v;
  }
  return nullptr;
}

Value* Value::find(std::string_view key) {
  return const_cast<Value*>(static_cast<const Value*>(this)->find(key));
}

void Value::set(std::string key, Value v) {
  if (Value* existing = find(key)) {
    *existing = std::move(v);
    return;
  }
  entries_.emplace_back(std::move(key), std::move(v));
}

bool Value::erase(std::string_view key) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->first == key) {
      entries_.erase(it);
      return true;
    }
  }
  return false;
}

void Value::set_origin_recursive(const Origin& o) {
  origin_ = o;
  for (Value& item : items_) item.set_origin_recursive(o);
  for (auto& entry : entries_) entry.second.set_origin_recursive(o);
}

std::string Value::describe() const {
  switch (kind_) {
    case Kind::kNull:
      return "null";
    case Kind::kBool:
      return b_ ? "true" : "false";
    case Kind::kInt:
      return std::to_string(i_);
    case Kind::kFloat:
      return format_double(d_);
    case Kind::kString:
      return "\"" + s_ + "\"";
    case Kind::kList:
      return "a list";
    case Kind::kMap:
      return "a mapping";
  }
  return "?";
}

bool operator==(const Value& a, const Value& b) {
  if (a.kind_ != b.kind_) return false;
  switch (a.kind_) {
    case Value::Kind::kNull:
      return true;
    case Value::Kind::kBool:
      return a.b_ == b.b_;
    case Value::Kind::kInt:
      return a.i_ == b.i_;
    case Value::Kind::kFloat:
      return a.d_ == b.d_ || (std::isnan(a.d_) && std::isnan(b.d_));
    case Value::Kind::kString:
      return a.s_ == b.s_;
    case Value::Kind::kList:
      return a.items_ == b.items_;
    case Value::Kind::kMap:
      return a.entries_ == b.entries_;
  }
  return false;
}

namespace {

bool parse_int(std::string_view text, std::int64_t& out) {
  bool negative = false;
  std::string_view digits = text;
  if (!digits.empty() && (digits.front() == '+' || digits.front() == '-')) {
    negative = digits.front() == '-';
    digits.remove_prefix(1);
  }
  int base = 10;
  if (digits.starts_with("0x")) {
    base = 16;
    digits.remove_prefix(2);
  } else if (digits.starts_with("0o")) {
    base = 8;
    digits.remove_prefix(2);
  }
  if (digits.empty()) return false;
  std::uint64_t magnitude = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), magnitude, base);
  if (ec != std::errc() || end != digits.data() + digits.size()) return false;
  const std::uint64_t limit =
      static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) + (negative ? 1 : 0);
  if (magnitude > limit) return false;
  out = negative ? static_cast<std::int64_t>(0 - magnitude) : static_cast<std::int64_t>(magnitude);
  return true;
}

}  // namespace

namespace {

// YAML 1.2 core-schema patterns, matched by hand: std::regex recurses once per character and
// overflows the stack on a long scalar (a 100000-digit number).
bool is_digit(char c, int base) {
  if (base == 16) return std::isxdigit(static_cast<unsigned char>(c)) != 0;
  if (base == 8) return c >= '0' && c <= '7';
  return c >= '0' && c <= '9';
}

// Skips digits of `base` from `pos`; returns how many.
std::size_t skip_digits(std::string_view s, std::size_t& pos, int base = 10) {
  const std::size_t start = pos;
  while (pos < s.size() && is_digit(s[pos], base)) ++pos;
  return pos - start;
}

std::size_t skip_sign(std::string_view s) {
  return !s.empty() && (s.front() == '+' || s.front() == '-') ? 1 : 0;
}

bool is_one_of(std::string_view s, std::initializer_list<std::string_view> words) {
  for (std::string_view w : words) {
    if (s == w) return true;
  }
  return false;
}

// [-+]?([0-9]+|0x[0-9a-fA-F]+|0o[0-7]+)
bool looks_like_int(std::string_view s) {
  std::size_t pos = skip_sign(s);
  int base = 10;
  if (s.substr(pos).starts_with("0x")) {
    base = 16;
    pos += 2;
  } else if (s.substr(pos).starts_with("0o")) {
    base = 8;
    pos += 2;
  }
  return skip_digits(s, pos, base) > 0 && pos == s.size();
}

// [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
bool looks_like_float(std::string_view s) {
  std::size_t pos = skip_sign(s);
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    if (skip_digits(s, pos) == 0) return false;
  } else {
    if (skip_digits(s, pos) == 0) return false;
    if (pos < s.size() && s[pos] == '.') {
      ++pos;
      skip_digits(s, pos);
    }
  }
  if (pos < s.size() && (s[pos] == 'e' || s[pos] == 'E')) {
    ++pos;
    pos += skip_sign(s.substr(pos));
    if (skip_digits(s, pos) == 0) return false;
  }
  return pos == s.size();
}

}  // namespace

Value resolve_plain_scalar(std::string_view text, Origin origin) {
  const std::string s(text);
  if (is_one_of(s, {"~", "null", "Null", "NULL", ""})) return Value::null(std::move(origin));
  if (is_one_of(s, {"true", "True", "TRUE"})) return Value::boolean(true, std::move(origin));
  if (is_one_of(s, {"false", "False", "FALSE"})) return Value::boolean(false, std::move(origin));
  if (looks_like_int(s)) {
    std::int64_t i = 0;
    if (parse_int(s, i)) return Value::integer(i, std::move(origin));
    // Out of int64 range: falls through to a float, as YAML loaders commonly do.
  }
  if (looks_like_float(s)) {
    double d = 0;
    const char* first = s.data() + (s.front() == '+' ? 1 : 0);
    auto [end, ec] = std::from_chars(first, s.data() + s.size(), d);
    if (ec == std::errc() && end == s.data() + s.size()) return Value::real(d, std::move(origin));
  }
  const std::string_view unsigned_part = std::string_view(s).substr(skip_sign(s));
  if (is_one_of(unsigned_part, {".inf", ".Inf", ".INF"})) {
    const double inf = std::numeric_limits<double>::infinity();
    return Value::real(s.front() == '-' ? -inf : inf, std::move(origin));
  }
  if (is_one_of(s, {".nan", ".NaN", ".NAN"})) {
    return Value::real(std::numeric_limits<double>::quiet_NaN(), std::move(origin));
  }
  return Value::string(s, std::move(origin));
}

std::string format_double(double d) {
  if (std::isnan(d)) return ".nan";
  if (std::isinf(d)) return d < 0 ? "-.inf" : ".inf";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), d);
  std::string s(buf, end);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::vector<std::string> split_key(std::string_view key) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = key.find('.', start);
    if (dot == std::string_view::npos) {
      parts.emplace_back(key.substr(start));
      return parts;
    }
    parts.emplace_back(key.substr(start, dot - start));
    start = dot + 1;
  }
}

}  // namespace ddp3d::config
