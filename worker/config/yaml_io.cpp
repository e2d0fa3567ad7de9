#include "worker/config/yaml_io.h"

#include <yaml-cpp/yaml.h>

#include <string_view>
#include <unordered_set>

#include "common/io/regular_file.h"
#include "worker/config/config.h"

namespace ddp3d::config {
namespace {

Origin origin_of(const YAML::Node& node, const std::string& name) {
  return Origin{name, node.Mark().is_null() ? 0 : node.Mark().line + 1};
}

// Aliases make a YAML document a graph: `&a [*a]` is a cycle and nine levels of ten aliases
// each (the "billion laughs") expand to 10^9 nodes. The tree we build is expanded, so the
// conversion is bounded in depth and in total nodes; real configs stay far below both.
constexpr int kMaxDepth = 64;
constexpr std::size_t kMaxNodes = 100000;

struct Budget {
  int depth = 0;
  std::size_t nodes = 0;
};

Value convert(const YAML::Node& node, const std::string& name, const std::string& key,
              Budget& budget);

// Enters one level below `node` for the conversion of a child, failing past the limits.
class Level {
 public:
  Level(Budget& budget, const Origin& origin, const std::string& key) : budget_(budget) {
    if (++budget_.depth > kMaxDepth) {
      throw ConfigError(origin.to_string(), key,
                        "nested deeper than " + std::to_string(kMaxDepth) +
                            " levels (a self-referencing YAML alias?)");
    }
    if (++budget_.nodes > kMaxNodes) {
      throw ConfigError(origin.to_string(), key,
                        "more than " + std::to_string(kMaxNodes) +
                            " values once YAML aliases are expanded (an alias bomb?)");
    }
  }
  ~Level() { --budget_.depth; }
  Level(const Level&) = delete;
  Level& operator=(const Level&) = delete;

 private:
  Budget& budget_;
};

Value convert(const YAML::Node& node, const std::string& name, const std::string& key,
              Budget& budget) {
  const Origin origin = origin_of(node, name);
  const Level level(budget, origin, key);
  switch (node.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      return Value::null(origin);
    case YAML::NodeType::Scalar: {
      // yaml-cpp tags plain scalars "?" and quoted ones "!"; an explicit !!str also means string.
      const std::string& tag = node.Tag();
      if (tag == "!" || tag == "tag:yaml.org,2002:str") return Value::string(node.Scalar(), origin);
      return resolve_plain_scalar(node.Scalar(), origin);
    }
    case YAML::NodeType::Sequence: {
      std::vector<Value> items;
      items.reserve(node.size());
      for (std::size_t i = 0; i < node.size(); ++i) {
        items.push_back(
            convert(node[i], name, key + (key.empty() ? "" : ".") + std::to_string(i), budget));
      }
      return Value::list(std::move(items), origin);
    }
    case YAML::NodeType::Map: {
      Value map = Value::map({}, origin);
      // Keys seen so far, hashed: scanning the mapping for each key made a mapping of n keys
      // cost n^2/2 comparisons (80000 keys took a minute). The views point into `node`'s
      // scalars, which outlive this loop.
      std::unordered_set<std::string_view> seen;
      seen.reserve(node.size());
      map.entries().reserve(node.size());
      for (const auto& kv : node) {
        if (!kv.first.IsScalar()) {
          throw ConfigError(origin_of(kv.first, name).to_string(), key,
                            "mapping keys must be plain strings");
        }
        const std::string& k = kv.first.Scalar();
        const std::string dotted = key.empty() ? k : key + "." + k;
        if (k == "<<" && kv.first.Tag() == "?") {
          throw ConfigError(origin_of(kv.first, name).to_string(), dotted,
                            "YAML merge keys (<<) are not supported; use _base_, or an anchor "
                            "for the whole value");
        }
        if (!seen.insert(k).second) {
          throw ConfigError(origin_of(kv.first, name).to_string(), dotted, "duplicate key");
        }
        map.entries().emplace_back(k, convert(kv.second, name, dotted, budget));
      }
      return map;
    }
  }
  return Value::null(origin);
}

bool needs_quotes(const std::string& s) {
  return resolve_plain_scalar(s, {}).kind() != Value::Kind::kString;
}

bool is_flat_list(const Value& v) {
  for (const Value& item : v.items()) {
    if (item.is_map() || item.is_list()) return false;
  }
  return true;
}

void emit(YAML::Emitter& out, const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kNull:
      out << YAML::Null;
      break;
    case Value::Kind::kBool:
      out << (v.as_bool() ? "true" : "false");
      break;
    case Value::Kind::kInt:
      out << std::to_string(v.as_int());
      break;
    case Value::Kind::kFloat:
      out << format_double(v.as_double());
      break;
    case Value::Kind::kString:
      if (needs_quotes(v.as_string())) out << YAML::DoubleQuoted;
      out << v.as_string();
      break;
    case Value::Kind::kList:
      if (is_flat_list(v)) out << YAML::Flow;
      out << YAML::BeginSeq;
      for (const Value& item : v.items()) emit(out, item);
      out << YAML::EndSeq;
      break;
    case Value::Kind::kMap:
      if (v.entries().empty()) out << YAML::Flow;
      out << YAML::BeginMap;
      for (const auto& [k, child] : v.entries()) {
        out << YAML::Key;
        if (needs_quotes(k)) out << YAML::DoubleQuoted;
        out << k << YAML::Value;
        emit(out, child);
      }
      out << YAML::EndMap;
      break;
  }
}

}  // namespace

Value parse_yaml(std::string_view text, const std::string& name) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    const Origin where{name, e.mark.is_null() ? 0 : e.mark.line + 1};
    throw ConfigError(where.to_string(), "", "invalid YAML: " + e.msg);
  }
  Budget budget;
  return convert(root, name, "", budget);
}

Value read_yaml_file(const std::filesystem::path& path, const std::string& name) {
  std::string text;
  try {
    text = io::read_regular_file(path, kMaxConfigFileBytes, "config file");
  } catch (const io::FileError& e) {
    // The message without the path, which `name` already gives.
    throw ConfigError(name, "", std::string(e.what()).substr(e.context().size() + 2));
  }
  return parse_yaml(text, name);
}

std::string write_yaml(const Value& v) {
  YAML::Emitter out;
  out.SetIndent(2);
  emit(out, v);
  std::string text = out.c_str();
  if (!text.empty() && text.back() != '\n') text += '\n';
  return text;
}

}  // namespace ddp3d::config
