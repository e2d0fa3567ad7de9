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
  option.value = parse_yaml(text.substr(eq + 1), origin);
  option.value.set_origin_recursive(Origin{origin, 0});
  return option;
}

void apply_cfg_option(Value& root, const CfgOption& option) {
  const Origin origin{"--cfg-options " + option.text, 0};
  Value* node = &root;
  std::string dotted;
  for (std::size_t i = 0; i + 1 < option.key.size(); ++i) {
    const std::string& part = option.key[i];
    dotted += (dotted.empty() ? "" : ".") + part;
    if (node->is_list()) {
      std::size_t index = 0;
      if (!parse_index(part, index) || index >= node->items().size()) {
        throw ConfigError(
            origin.to_string(), dotted,
            "no such list element (the list has " + std::to_string(node->items().size()) + ")");
      }
      node = &node->items()[index];
      continue;
    }
    if (node->is_null()) *node = Value::map({}, origin);
    if (!node->is_map()) {
      throw ConfigError(origin.to_string(), dotted.substr(0, dotted.rfind('.')),
                        "cannot set a key inside " + node->describe() + " (set at " +
                            node->origin().to_string() + ")");
    }
    Value* child = node->find(part);
    if (child == nullptr) {
      node->set(part, Value::map({}, origin));
      child = node->find(part);
    }
    node = child;
  }
  const std::string& last = option.key.back();
  dotted += (dotted.empty() ? "" : ".") + last;
  if (node->is_list()) {
    std::size_t index = 0;
    if (!parse_index(last, index) || index >= node->items().size()) {
      throw ConfigError(
          origin.to_string(), dotted,
          "no such list element (the list has " + std::to_string(node->items().size()) + ")");
    }
    merge_into(node->items()[index], option.value, dotted);
    return;
  }
  if (node->is_null()) *node = Value::map({}, origin);
  if (!node->is_map()) {
    throw ConfigError(origin.to_string(), dotted.substr(0, dotted.rfind('.')),
                      "cannot set a key inside " + node->describe() + " (set at " +
                          node->origin().to_string() + ")");
  }
  if (Value* existing = node->find(last)) {
    merge_into(*existing, option.value, dotted);
  } else {
    Value value = option.value;
    strip_delete(value, dotted);
    node->set(last, std::move(value));
  }
}

}  // namespace ddp3d::config
