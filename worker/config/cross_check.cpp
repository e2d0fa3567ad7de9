#include "worker/config/cross_check.h"

#include <cstdlib>
#include <memory>

#include "worker/config/config_root.h"

namespace ddp3d::config {

const Value* CrossCheck::at(const std::string& key) const {
  const Value* node = &root_;
  for (const std::string& part : split_key(key)) {
    if (node->is_list()) {
      const std::size_t index = std::strtoul(part.c_str(), nullptr, 10);
      if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos ||
          index >= node->items().size()) {
        return nullptr;
      }
      node = &node->items()[index];
      continue;
    }
    node = node->find(part);
    if (node == nullptr) return nullptr;
  }
  return node;
}

std::vector<std::int64_t> CrossCheck::ints(const std::string& key) const {
  std::vector<std::int64_t> out;
  const Value* v = at(key);
  if (v != nullptr && v->is_list()) {
    for (const Value& item : v->items()) out.push_back(item.as_int());
  }
  return out;
}

std::vector<double> CrossCheck::numbers(const std::string& key) const {
  std::vector<double> out;
  const Value* v = at(key);
  if (v != nullptr && v->is_list()) {
    for (const Value& item : v->items()) out.push_back(item.as_double());
  }
  return out;
}

Config CrossCheck::view(const std::string& key) const {
  auto root = std::make_shared<Config::Root>(Config::Root{root_, {}});
  const Value* top = &root->tree;
  return Config(std::move(root), top, "").node(key);
}

std::string CrossCheck::origin(const std::string& key) const {
  const Value* v = at(key);
  return v != nullptr ? v->origin().to_string() : "";
}

void CrossCheck::expect(bool ok, const std::string& key, const std::string& message) {
  if (!ok) report(origin(key), key, message);
}

void CrossCheck::report(std::string origin, std::string key, std::string message) {
  issues_.push_back({std::move(origin), std::move(key), std::move(message)});
}

std::string show(const std::vector<std::int64_t>& values) {
  std::string s = "[";
  for (std::size_t i = 0; i < values.size(); ++i) s += (i ? ", " : "") + std::to_string(values[i]);
  return s + "]";
}

std::string show(const std::vector<double>& values) {
  std::string s = "[";
  for (std::size_t i = 0; i < values.size(); ++i) s += (i ? ", " : "") + format_double(values[i]);
  return s + "]";
}

}  // namespace ddp3d::config
