// The config tree: YAML-like values (null, bool, int, float, string, list, mapping) where each
// node remembers the file and line that set it. Mappings keep their keys in file order.
// Internal to ddp3d_config; no yaml-cpp here.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ddp3d::config {

// Where a value came from: a file and 1-based line (0 = unknown), or a pseudo-file such as
// "--cfg-options a.b=1" or "<schema default>".
struct Origin {
  std::string file;
  int line = 0;
  std::string to_string() const;
};

class Value {
 public:
  enum class Kind { kNull, kBool, kInt, kFloat, kString, kList, kMap };
  using Entry = std::pair<std::string, Value>;

  Value() = default;
  static Value null(Origin o = {});
  static Value boolean(bool b, Origin o = {});
  static Value integer(std::int64_t i, Origin o = {});
  static Value real(double d, Origin o = {});
  static Value string(std::string s, Origin o = {});
  static Value list(std::vector<Value> items = {}, Origin o = {});
  static Value map(std::vector<Entry> entries = {}, Origin o = {});

  Kind kind() const { return kind_; }
  bool is_null() const { return kind_ == Kind::kNull; }
  bool is_map() const { return kind_ == Kind::kMap; }
  bool is_list() const { return kind_ == Kind::kList; }
  bool is_number() const { return kind_ == Kind::kInt || kind_ == Kind::kFloat; }
  bool is_scalar() const { return !is_map() && !is_list() && !is_null(); }

  bool as_bool() const { return b_; }
  std::int64_t as_int() const { return i_; }
  double as_double() const { return kind_ == Kind::kInt ? static_cast<double>(i_) : d_; }
  const std::string& as_string() const { return s_; }

  const std::vector<Value>& items() const { return items_; }
  std::vector<Value>& items() { return items_; }
  const std::vector<Entry>& entries() const { return entries_; }
  std::vector<Entry>& entries() { return entries_; }

  // Mapping access; nullptr when absent or when this is not a mapping.
  const Value* find(std::string_view key) const;
  Value* find(std::string_view key);
  // Inserts or replaces `key` (appended at the end when new).
  void set(std::string key, Value v);
  // Removes `key`; returns whether it was there.
  bool erase(std::string_view key);

  const Origin& origin() const { return origin_; }
  void set_origin(Origin o) { origin_ = std::move(o); }
  // Sets `o` on this node and every node below it.
  void set_origin_recursive(const Origin& o);

  // For messages: `"abc"`, `3`, `1.5`, `true`, `null`, `a list`, `a mapping`.
  std::string describe() const;

  // Structural equality (origins ignored; 1 == 1.0 is false: kinds must match).
  friend bool operator==(const Value& a, const Value& b);

 private:
  Kind kind_ = Kind::kNull;
  bool b_ = false;
  std::int64_t i_ = 0;
  double d_ = 0.0;
  std::string s_;
  std::vector<Value> items_;
  std::vector<Entry> entries_;
  Origin origin_;
};

// Resolves a plain (unquoted) YAML scalar by YAML 1.2's core schema: null (~, null, empty),
// bool (true/false in any common case), int (decimal, 0x, 0o), float (1.5, 1e-4, .inf, .nan);
// anything else is a string.
Value resolve_plain_scalar(std::string_view text, Origin origin);

// Shortest text that reads back as the same double and is recognisably a float ("1.0", "1e-05").
std::string format_double(double d);

// Splits a dotted key ("a.b.0.c") into its components; empty components are kept so callers can
// reject them.
std::vector<std::string> split_key(std::string_view key);

}  // namespace ddp3d::config
