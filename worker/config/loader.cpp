#include "worker/config/loader.h"

#include <system_error>
#include <vector>

#include "worker/config/config.h"
#include "worker/config/merge.h"
#include "worker/config/yaml_io.h"

namespace ddp3d::config {
namespace {

namespace fs = std::filesystem;

constexpr const char* kBase = "_base_";

// The files being loaded, outermost first: how we got to the current one.
struct Chain {
  std::vector<fs::path> canonical;
  std::vector<std::string> names;

  std::string describe(const std::string& last) const {
    std::string s;
    for (const std::string& n : names) s += n + " -> ";
    return s + last;
  }
};

Value load_text(Value doc, const std::string& name, const fs::path& dir, const fs::path& name_dir,
                Chain& chain);

Value load_file(const fs::path& file, const std::string& name, const Origin& referrer,
                Chain& chain) {
  std::error_code ec;
  const fs::path canonical = fs::weakly_canonical(file, ec);
  for (std::size_t i = 0; i < chain.canonical.size(); ++i) {
    if (!ec && chain.canonical[i] == canonical) {
      throw ConfigError(referrer.to_string(), kBase, "cycle in _base_: " + chain.describe(name));
    }
  }
  // Anything that exists but is not a regular file (a FIFO, a directory) fails in
  // read_yaml_file with a message saying what it is.
  if (!fs::exists(file, ec)) {
    if (chain.names.empty()) throw ConfigError(name, "", "config file not found");
    throw ConfigError(referrer.to_string(), kBase,
                      "base file not found: " + name + " (via " + chain.describe(name) + ")");
  }
  Value doc = read_yaml_file(file, name);
  chain.canonical.push_back(canonical);
  chain.names.push_back(name);
  Value merged =
      load_text(std::move(doc), name, file.parent_path(), fs::path(name).parent_path(), chain);
  chain.canonical.pop_back();
  chain.names.pop_back();
  return merged;
}

// Paths named by `_base_` in `doc` (removed from it), with the origin of each entry.
std::vector<std::pair<std::string, Origin>> take_bases(Value& doc, const std::string& name) {
  std::vector<std::pair<std::string, Origin>> bases;
  const Value* base = doc.find(kBase);
  if (base == nullptr) return bases;
  auto add = [&](const Value& entry) {
    if (entry.kind() != Value::Kind::kString || entry.as_string().empty()) {
      throw ConfigError(entry.origin().to_string(), kBase,
                        "expected a file path, got " + entry.describe());
    }
    bases.emplace_back(entry.as_string(), entry.origin());
  };
  if (base->is_list()) {
    for (const Value& entry : base->items()) add(entry);
  } else if (!base->is_null()) {
    add(*base);
  }
  doc.erase(kBase);
  return bases;
}

// `dir` is where relative bases live; `name_dir` is the same place as the user spelled it.
Value load_text(Value doc, const std::string& name, const fs::path& dir, const fs::path& name_dir,
                Chain& chain) {
  if (doc.is_null()) doc = Value::map({}, Origin{name, 0});
  if (!doc.is_map()) {
    throw ConfigError(doc.origin().to_string(), "",
                      "a config file must be a mapping, got " + doc.describe());
  }
  Value merged = Value::map({}, Origin{name, 0});
  for (const auto& [path, origin] : take_bases(doc, name)) {
    const fs::path target = fs::path(path).is_absolute() ? fs::path(path) : dir / path;
    const std::string target_name =
        fs::path(path).is_absolute() ? path : (name_dir / path).lexically_normal().string();
    merge_into(merged, load_file(target, target_name, origin, chain));
  }
  merge_into(merged, std::move(doc));
  // Keys missing at the top are the file's fault, not its first line's.
  merged.set_origin(Origin{name, 0});
  return merged;
}

}  // namespace

Value load_tree(const fs::path& file, const std::string& name) {
  Chain chain;
  return load_file(file, name, Origin{name, 0}, chain);
}

Value load_tree_from_text(std::string_view text, const std::string& name,
                          const fs::path& base_dir) {
  Chain chain;
  chain.canonical.push_back(base_dir / name);  // lets a base that names the text's file fail
  chain.names.push_back(name);
  std::error_code ec;
  const fs::path name_dir = base_dir.lexically_proximate(fs::current_path(ec));
  return load_text(parse_yaml(text, name), name, base_dir, name_dir == "." ? fs::path() : name_dir,
                   chain);
}

}  // namespace ddp3d::config
