// ddp3d training configs: YAML files with mmengine-style `_base_` inheritance, deep merge,
// `--cfg-options a.b.c=value` overrides, and validation against ddp3d's schema.
//
//   const ddp3d::config::Config cfg = ddp3d::config::load(path,
//   {"optim_wrapper.optimizer.lr=0.01"}); double lr =
//   cfg.get<double>("optim_wrapper.optimizer.lr"); int every =
//   cfg.get_or<int>("default_hooks.logger.interval", 50); for (const Config& s :
//   cfg.list("param_scheduler")) { s.get<std::string>("type"); }
//
// Every value remembers the file and line that set it, so each error names the dotted key and
// its origin: `configs/x.yaml:12: optim_wrapper.optimizer.lr: expected a number, got "abc"`.
// Validation collects every problem and throws one ConfigError listing them all.
//
// yaml-cpp stays out of this header (pimpl): the tree lives in an internal representation.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace ddp3d::config {

// One problem found in a config. `origin` is "file:line" (or "--cfg-options k=v"), `key` the
// dotted path ("model.backbone.layer_nums.1"), `message` what is wrong.
struct Issue {
  std::string origin;
  std::string key;
  std::string message;
  // "origin: key: message" (the parts that are empty are left out).
  std::string to_string() const;
};

// Every config failure: unreadable or malformed YAML, missing or cyclic `_base_`, bad
// --cfg-options, schema violations, typed-access misuse. what() lists all issues, one a line.
class ConfigError : public std::runtime_error {
 public:
  explicit ConfigError(std::vector<Issue> issues);
  ConfigError(std::string origin, std::string key, std::string message);
  const std::vector<Issue>& issues() const { return issues_; }

 private:
  std::vector<Issue> issues_;
};

class Value;  // internal tree node (worker/config/value.h)

// The types `get` converts to. Integers are range-checked; a float never converts to an integer;
// an integer converts to a float. Lists convert element-wise.
template <typename T>
concept ConfigScalar =
    std::is_same_v<T, bool> || std::is_same_v<T, int> || std::is_same_v<T, std::int64_t> ||
    std::is_same_v<T, double> || std::is_same_v<T, float> || std::is_same_v<T, std::string>;
template <typename T>
struct IsConfigList : std::false_type {};
template <ConfigScalar E>
struct IsConfigList<std::vector<E>> : std::true_type {};
template <ConfigScalar E>
struct IsConfigList<std::vector<std::vector<E>>> : std::true_type {};
template <typename T>
concept ConfigGettable = ConfigScalar<T> || IsConfigList<T>::value;

// An immutable view of a (sub)tree of a loaded config. Cheap to copy (shares the tree).
// Keys are dotted paths relative to this view; a numeric component indexes a list
// ("param_scheduler.1.end").
class Config {
 public:
  // An empty mapping (no file): every key is missing. Lets Config be a plain member.
  Config();

  // The value at `key`, converted to T. Throws ConfigError naming the key and the file that set
  // it when the key is missing, null, or of another type.
  template <ConfigGettable T>
  T get(std::string_view key) const;
  // Like get, but `fallback` when the key is missing or null (a present value of the wrong type
  // is still an error).
  template <ConfigGettable T>
  T get_or(std::string_view key, T fallback) const;

  bool has(std::string_view key) const;  // present and not null
  // The subtree at `key` ("" = this view). Throws when missing.
  Config node(std::string_view key) const;
  // The elements of the list at `key` as views. Throws when missing or not a list.
  std::vector<Config> list(std::string_view key) const;
  // The keys of this mapping in file order (empty for non-mappings).
  std::vector<std::string> keys() const;
  std::size_t size() const;  // entries of a mapping or list; 0 for scalars and null

  bool is_map() const;
  bool is_list() const;
  bool is_null() const;
  bool is_scalar() const;

  // Where the value at `key` was set: "configs/x.yaml:12" or "--cfg-options a.b=1".
  std::string origin(std::string_view key = "") const;
  // Dotted path of this view from the root ("" for the root).
  const std::string& path() const { return path_; }
  // The file `load` was given (the same for every view of one config).
  const std::filesystem::path& file() const;

  // This view as YAML (block style, lists of scalars in flow style, floats round-trip).
  // On the root view: the merged, overridden, defaults-filled config for the work dir.
  std::string dump_yaml() const;

  // Internal: used by the loader and by views.
  struct Root;
  Config(std::shared_ptr<const Root> root, const Value* value, std::string path);

 private:
  const Value& at(std::string_view key) const;  // throws when missing
  const Value* find(std::string_view key) const;
  std::string qualify(std::string_view key) const;

  std::shared_ptr<const Root> root_;
  const Value* value_ = nullptr;
  std::string path_;
};

// Loads `file` with its `_base_` chain, applies `cfg_options` ("a.b.c=value", value parsed as a
// YAML scalar or flow sequence/mapping; "a=1,2" is a list as in mmengine), validates against
// ddp3d's schema (unknown keys, types, ranges, enums, required keys) and fills its defaults, then
// runs the cross-key checks (e.g. BEV grid = range / voxel size). Throws one ConfigError with
// every problem found. Call it before any process group starts.
Config load(const std::filesystem::path& file, const std::vector<std::string>& cfg_options = {});

// The same from YAML text; `name` is used as the file name in messages, relative `_base_`
// paths resolve against `base_dir`.
Config parse(std::string_view yaml_text, std::string_view name = "<string>",
             const std::vector<std::string>& cfg_options = {},
             const std::filesystem::path& base_dir = std::filesystem::current_path());

// One top-level section (`key`, e.g. "default_hooks") from YAML text, validated against its
// schema with its defaults filled, as the view `key` of a config holding only it: what code that
// builds options without a config file (tests, tools) passes where a loaded config's node goes.
// The whole-config cross-key checks do not run.
Config parse_section(std::string_view key, std::string_view yaml_text,
                     std::string_view name = "<string>");

}  // namespace ddp3d::config
