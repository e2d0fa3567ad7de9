#include "worker/config/yaml_io.h"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <sstream>

#include "worker/config/config.h"

namespace ddp3d::config {
namespace {

Origin origin_of(const YAML::Node& node, const std::string& name) {
  return Origin{name, node.Mark().is_null() ? 0 : node.Mark().line + 1};
}

Value convert(const YAML::Node& node, const std::string& name, const std::string& key) {
  const Origin origin = origin_of(node, name);
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
        items.push_back(convert(node[i], name, key + (key.empty() ? "" : ".") + std::to_string(i)));
      }
      return Value::list(std::move(items), origin);
    }
    case YAML::NodeType::Map: {
      Value map = Value::map({}, origin);
      for (const auto& kv : node) {
        if (!kv.first.IsScalar()) {
          throw ConfigError(origin_of(kv.first, name).to_string(), key,
                            "mapping keys must be plain strings");
        }
        const std::string& k = kv.first.Scalar();
        const std::string dotted = key.empty() ? k : key + "." + k;
        if (map.find(k) != nullptr) {
          throw ConfigError(origin_of(kv.first, name).to_string(), dotted, "duplicate key");
        }
        map.set(k, convert(kv.second, name, dotted));
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
  return convert(root, name, "");
}

Value read_yaml_file(const std::filesystem::path& path, const std::string& name) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(name, "", "cannot read config file");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_yaml(text.str(), name);
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
