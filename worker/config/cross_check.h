// What a cross-key check of a validated config tree works with: dotted look-ups ("a.b.0.c"),
// typed reads that tolerate a missing key, and issues that name the key and its origin.
// check_consistency() hands one to each registered component's check.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "worker/config/config.h"
#include "worker/config/value.h"

namespace ddp3d::config {

class CrossCheck {
 public:
  CrossCheck(const Value& root, std::vector<Issue>& issues) : root_(root), issues_(issues) {}

  // The value at dotted `key` below the root; nullptr when any part is missing.
  const Value* at(const std::string& key) const;
  // The list at `key` as numbers; empty when it is missing or not a list.
  std::vector<std::int64_t> ints(const std::string& key) const;
  std::vector<double> numbers(const std::string& key) const;
  // The subtree at `key` as a Config (over a copy of the tree).
  Config view(const std::string& key) const;
  // "file:line" of `key`, or "" when it is missing.
  std::string origin(const std::string& key) const;

  // Reports `key` (at its value's origin) with `message` unless `ok`.
  void expect(bool ok, const std::string& key, const std::string& message);
  void report(std::string origin, std::string key, std::string message);

 private:
  const Value& root_;
  std::vector<Issue>& issues_;
};

// "[1, 2]" and "[0.5, 1.0]" (floats as the config writes them), for messages.
std::string show(const std::vector<std::int64_t>& values);
std::string show(const std::vector<double>& values);

}  // namespace ddp3d::config
