#include "worker/config/overrides.h"

#include <charconv>

#include "worker/config/config.h"
#include "worker/config/merge.h"
#include "worker/config/yaml_io.h"

namespace ddp3d::config {
namespace {

bool parse_index(const std::string& s, std::size_t& index) {
  if (s.empty()) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), index);
  return ec == std::errc() && end == s.data() + s.size();
}

// mmengine's DictAction reads `ids=1,2,3` as a list; so do we: a comma outside brackets and
// quotes turns an unbracketed value into a flow sequence.
std::string as_yaml(const std::string& value) {
  if (value.empty() || value.front() == '[' || value.front() == '{') return value;
  int depth = 0;
  char quote = 0;
  for (char c : value) {
    if (quote != 0) {
      if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if (c == ']' || c == '}') {
      --depth;
    } else if (c == ',' && depth == 0) {
      return "[" + value + "]";
    }
  }
  return value;
}

}  // namespace

CfgOption parse_cfg_option(const std::string& text) {
  const std::string origin = "--cfg-options " + text;
  const std::size_t eq = text.find('=');
  if (eq == std::string::npos) throw ConfigError(origin, "", "expected KEY=VALUE");
  const std::string key = text.substr(0, eq);
  CfgOption option;
  option.text = text;
  option.key = split_key(key);
  for (const std::string& part : option.key) {
    if (part.empty()) throw ConfigError(origin, key, "empty component in dotted key");
  }
  option.value = parse_yaml(as_yaml(text.substr(eq + 1)), origin);
  option.value.set_origin_recursive(Origin{origin, 0});
  return option;
}

namespace {

// The slot for `part` below `node` (`dotted` is the path up to and including `part`): a list
// element, or a mapping value - added as null when missing, and a null `node` becomes a mapping.
Value& child_slot(Value& node, const std::string& part, const std::string& dotted,
                  const Origin& origin) {
  if (node.is_list()) {
    std::size_t index = 0;
    if (!parse_index(part, index) || index >= node.items().size()) {
      throw ConfigError(
          origin.to_string(), dotted,
          "no such list element (the list has " + std::to_string(node.items().size()) + ")");
    }
    return node.items()[index];
  }
  if (node.is_null()) node = Value::map({}, origin);
  if (!node.is_map()) {
    throw ConfigError(origin.to_string(), dotted.substr(0, dotted.rfind('.')),
                      "cannot set a key inside " + node.describe() + " (set at " +
                          node.origin().to_string() + ")");
  }
  if (node.find(part) == nullptr) node.set(part, Value::null(origin));
  return *node.find(part);
}

}  // namespace

void apply_cfg_option(Value& root, const CfgOption& option) {
  const Origin origin{"--cfg-options " + option.text, 0};
  Value* node = &root;
  std::string dotted;
  for (const std::string& part : option.key) {
    dotted += (dotted.empty() ? "" : ".") + part;
    node = &child_slot(*node, part, dotted, origin);
  }
  // Mappings merge into what is there (a null or new slot is simply replaced).
  merge_into(*node, option.value, dotted);
}

}  // namespace ddp3d::config
