#include "worker/config/config.h"

#include <charconv>
#include <limits>
#include <stdexcept>

#include "worker/config/config_root.h"
#include "worker/config/consistency.h"
#include "worker/config/loader.h"
#include "worker/config/overrides.h"
#include "worker/config/schema.h"
#include "worker/config/value.h"
#include "worker/config/yaml_io.h"

namespace ddp3d::config {

// ---- errors ------------------------------------------------------------------------------

std::string Issue::to_string() const {
  std::string s = origin;
  if (!key.empty()) s += (s.empty() ? "" : ": ") + key;
  return s + (s.empty() ? "" : ": ") + message;
}

namespace {

std::string format_issues(const std::vector<Issue>& issues) {
  if (issues.size() == 1) return issues.front().to_string();
  std::string s = std::to_string(issues.size()) + " config errors:";
  for (const Issue& issue : issues) s += "\n  " + issue.to_string();
  return s;
}

}  // namespace

ConfigError::ConfigError(std::vector<Issue> issues)
    : std::runtime_error(format_issues(issues)), issues_(std::move(issues)) {}

ConfigError::ConfigError(std::string origin, std::string key, std::string message)
    : ConfigError(std::vector<Issue>{{std::move(origin), std::move(key), std::move(message)}}) {}

// ---- typed conversion ----------------------------------------------------------------------

namespace {

template <typename T>
struct Tag {};

[[noreturn]] void type_error(const Value& v, const std::string& key, const char* expected) {
  throw ConfigError(v.origin().to_string(), key,
                    std::string("expected ") + expected + ", got " + v.describe());
}

bool convert(const Value& v, const std::string& key, Tag<bool>) {
  if (v.kind() != Value::Kind::kBool) type_error(v, key, "true or false");
  return v.as_bool();
}

std::int64_t convert(const Value& v, const std::string& key, Tag<std::int64_t>) {
  if (v.kind() != Value::Kind::kInt) type_error(v, key, "an integer");
  return v.as_int();
}

int convert(const Value& v, const std::string& key, Tag<int>) {
  const std::int64_t i = convert(v, key, Tag<std::int64_t>{});
  if (i < std::numeric_limits<int>::min() || i > std::numeric_limits<int>::max()) {
    type_error(v, key, "an integer in 32-bit range");
  }
  return static_cast<int>(i);
}

double convert(const Value& v, const std::string& key, Tag<double>) {
  if (!v.is_number()) type_error(v, key, "a number");
  return v.as_double();
}

float convert(const Value& v, const std::string& key, Tag<float>) {
  return static_cast<float>(convert(v, key, Tag<double>{}));
}

std::string convert(const Value& v, const std::string& key, Tag<std::string>) {
  if (v.kind() != Value::Kind::kString) type_error(v, key, "a string");
  return v.as_string();
}

template <typename E>
std::vector<E> convert(const Value& v, const std::string& key, Tag<std::vector<E>>) {
  if (!v.is_list()) type_error(v, key, "a list");
  std::vector<E> out;
  out.reserve(v.items().size());
  for (std::size_t i = 0; i < v.items().size(); ++i) {
    out.push_back(convert(v.items()[i], key + "." + std::to_string(i), Tag<E>{}));
  }
  return out;
}

}  // namespace

// ---- Config --------------------------------------------------------------------------------

Config::Config() {
  auto root = std::make_shared<Root>(Root{Value::map(), {}});
  value_ = &root->tree;
  root_ = std::move(root);
}

Config::Config(std::shared_ptr<const Root> root, const Value* value, std::string path)
    : root_(std::move(root)), value_(value), path_(std::move(path)) {}

std::string Config::qualify(std::string_view key) const {
  if (key.empty()) return path_;
  if (path_.empty()) return std::string(key);
  return path_ + "." + std::string(key);
}

const Value* Config::find(std::string_view key) const {
  if (key.empty()) return value_;
  const Value* v = value_;
  for (const std::string& part : split_key(key)) {
    if (v->is_map()) {
      v = v->find(part);
    } else if (v->is_list()) {
      std::size_t index = 0;
      auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), index);
      if (ec != std::errc() || end != part.data() + part.size() || index >= v->items().size()) {
        return nullptr;
      }
      v = &v->items()[index];
    } else {
      return nullptr;
    }
    if (v == nullptr) return nullptr;
  }
  return v;
}

const Value& Config::at(std::string_view key) const {
  const Value* v = find(key);
  if (v == nullptr) {
    throw ConfigError(root_->file.string(), qualify(key), "missing key");
  }
  return *v;
}

template <ConfigGettable T>
T Config::get(std::string_view key) const {
  const Value& v = at(key);
  if (v.is_null()) throw ConfigError(v.origin().to_string(), qualify(key), "is null");
  return convert(v, qualify(key), Tag<T>{});
}

template <ConfigGettable T>
T Config::get_or(std::string_view key, T fallback) const {
  const Value* v = find(key);
  if (v == nullptr || v->is_null()) return fallback;
  return convert(*v, qualify(key), Tag<T>{});
}

#define DDP3D_CONFIG_INSTANTIATE(T)                                                      \
  template T Config::get<T>(std::string_view key) const;                                 \
  template T Config::get_or<T>(std::string_view key, T fallback) const;                  \
  template std::vector<T> Config::get<std::vector<T>>(std::string_view key) const;       \
  template std::vector<T> Config::get_or<std::vector<T>>(std::string_view key,           \
                                                         std::vector<T> fallback) const; \
  template std::vector<std::vector<T>> Config::get<std::vector<std::vector<T>>>(         \
      std::string_view key) const;                                                       \
  template std::vector<std::vector<T>> Config::get_or<std::vector<std::vector<T>>>(      \
      std::string_view key, std::vector<std::vector<T>> fallback) const;
DDP3D_CONFIG_INSTANTIATE(bool)
DDP3D_CONFIG_INSTANTIATE(int)
DDP3D_CONFIG_INSTANTIATE(std::int64_t)
DDP3D_CONFIG_INSTANTIATE(double)
DDP3D_CONFIG_INSTANTIATE(float)
DDP3D_CONFIG_INSTANTIATE(std::string)
#undef DDP3D_CONFIG_INSTANTIATE

bool Config::has(std::string_view key) const {
  const Value* v = find(key);
  return v != nullptr && !v->is_null();
}

Config Config::node(std::string_view key) const {
  return Config(root_, &at(key), qualify(key));
}

std::vector<Config> Config::list(std::string_view key) const {
  const Value& v = at(key);
  if (!v.is_list()) type_error(v, qualify(key), "a list");
  std::vector<Config> out;
  for (std::size_t i = 0; i < v.items().size(); ++i) {
    out.emplace_back(root_, &v.items()[i],
                     qualify(key) + (qualify(key).empty() ? "" : ".") + std::to_string(i));
  }
  return out;
}

std::vector<std::string> Config::keys() const {
  std::vector<std::string> out;
  for (const auto& entry : value_->entries()) out.push_back(entry.first);
  return out;
}

std::size_t Config::size() const {
  if (value_->is_map()) return value_->entries().size();
  if (value_->is_list()) return value_->items().size();
  return 0;
}

bool Config::is_map() const {
  return value_->is_map();
}
bool Config::is_list() const {
  return value_->is_list();
}
bool Config::is_null() const {
  return value_->is_null();
}
bool Config::is_scalar() const {
  return value_->is_scalar();
}

std::string Config::origin(std::string_view key) const {
  return at(key).origin().to_string();
}

const std::filesystem::path& Config::file() const {
  return root_->file;
}

std::string Config::dump_yaml() const {
  return write_yaml(*value_);
}

// ---- loading -------------------------------------------------------------------------------

namespace {

Config finish(Value tree, const std::filesystem::path& file,
              const std::vector<std::string>& cfg_options) {
  // Parse every option first so that all malformed ones are reported together.
  std::vector<Issue> issues;
  std::vector<CfgOption> options;
  for (const std::string& text : cfg_options) {
    try {
      options.push_back(parse_cfg_option(text));
    } catch (const ConfigError& e) {
      issues.insert(issues.end(), e.issues().begin(), e.issues().end());
    }
  }
  for (const CfgOption& option : options) {
    try {
      apply_cfg_option(tree, option);
    } catch (const ConfigError& e) {
      issues.insert(issues.end(), e.issues().begin(), e.issues().end());
    }
  }
  ddp3d_schema().validate(tree, "", issues);
  // Cross-key checks assume every key has its schema type, so they wait for a clean validation.
  if (issues.empty()) check_consistency(tree, issues);
  if (!issues.empty()) throw ConfigError(std::move(issues));
  auto root = std::make_shared<Config::Root>(Config::Root{std::move(tree), file});
  const Value* top = &root->tree;
  return Config(std::move(root), top, "");
}

}  // namespace

Config load(const std::filesystem::path& file, const std::vector<std::string>& cfg_options) {
  return finish(load_tree(file, file.string()), file, cfg_options);
}

Config parse(std::string_view yaml_text, std::string_view name,
             const std::vector<std::string>& cfg_options, const std::filesystem::path& base_dir) {
  return finish(load_tree_from_text(yaml_text, std::string(name), base_dir), std::string(name),
                cfg_options);
}

Config parse_section(std::string_view key, std::string_view yaml_text, std::string_view name) {
  const Schema* schema = nullptr;
  for (const Field& f : ddp3d_schema().fields()) {
    if (f.first == key) schema = &f.second;
  }
  if (schema == nullptr) throw std::logic_error("no config section named " + std::string(key));
  Value section = parse_yaml(yaml_text, std::string(name));
  if (section.is_null()) section = Value::map({}, Origin{std::string(name), 0});
  std::vector<Issue> issues;
  schema->validate(section, std::string(key), issues);
  if (!issues.empty()) throw ConfigError(std::move(issues));
  Value tree = Value::map({}, Origin{std::string(name), 0});
  tree.set(std::string(key), std::move(section));
  auto root = std::make_shared<Config::Root>(Config::Root{std::move(tree), std::string(name)});
  const Value* value = root->tree.find(key);
  return Config(std::move(root), value, std::string(key));
}

}  // namespace ddp3d::config
