// A declarative schema for config trees: every key with its type, default, allowed range or
// choices and a doc string. Mappings can branch on a discriminator key (`type`), as mmengine
// registries do: the keys allowed next to `type: SGD` differ from those next to `type: AdamW`.
//
//   Schema::map({
//       {"lr", Schema::number().min(0, /*exclusive=*/true).required().doc("learning rate")},
//       {"betas", Schema::list(Schema::number()).length(2).def_list({0.9, 0.999})},
//   })
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "worker/config/config.h"
#include "worker/config/value.h"

namespace ddp3d::config {

class Schema;
using Field = std::pair<std::string, Schema>;

class Schema {
 public:
  enum class Kind { kBool, kInt, kNumber, kString, kList, kMap, kDict };

  static Schema boolean() { return Schema(Kind::kBool); }
  static Schema integer() { return Schema(Kind::kInt); }
  static Schema number() { return Schema(Kind::kNumber); }  // an int or a float
  static Schema string() { return Schema(Kind::kString); }
  static Schema list(Schema element);
  // A mapping with fixed keys.
  static Schema map(std::vector<Field> fields);
  // A mapping with free keys (e.g. class name -> count), every value matching `element`.
  static Schema dict(Schema element);
  // A registered component of `kind` ("model", "backbone", ...): a mapping that branches on
  // `type` over the variants in component_schemas() at validation time. `default_type` is used
  // when `type` is missing ("" = it is required).
  static Schema component(std::string kind, std::string default_type = "");

  Schema&& doc(std::string text) &&;
  Schema&& required() &&;
  Schema&& nullable() &&;  // null is accepted (and means "not set")
  Schema&& def(Value v) &&;
  Schema&& def(bool b) &&;
  Schema&& def(int i) &&;
  Schema&& def(double d) &&;
  Schema&& def(const char* s) &&;
  Schema&& def_list(std::vector<double> values) &&;
  Schema&& def_int_list(std::vector<int> values) &&;
  Schema&& def_null() &&;       // nullable, and filled in as null when missing
  Schema&& def_empty_map() &&;  // a missing mapping is created and its defaults filled
  Schema&& min(double lo, bool exclusive = false) &&;
  Schema&& max(double hi, bool exclusive = false) &&;
  Schema&& one_of(std::vector<std::string> choices) &&;
  Schema&& length(std::size_t n) &&;
  Schema&& min_length(std::size_t n) &&;
  // A mapping given where this list is expected is taken as a one-element list (mmdet3d writes
  // one assigner as a dict and per-class assigners as a list).
  Schema&& single_as_list() &&;
  // Branches this mapping on `key` (default "type"): `variants` maps each allowed value to the
  // fields it adds. `default_variant` is used when the key is missing ("" = it is required).
  Schema&& variants(std::vector<std::pair<std::string, std::vector<Field>>> variants,
                    std::string default_variant = "", std::string key = "type") &&;
  // When the discriminator is missing and the boolean `key` is `value`, the variant is
  // `variant` instead of the default one (mmengine's `train_cfg.by_epoch: false` spells an
  // IterBasedTrainLoop).
  Schema&& default_variant_if(std::string key, bool value, std::string variant) &&;
  // Names a shared sub-schema; the docs describe it once, in its own section.
  Schema&& named(std::string name) &&;

  Kind kind() const { return kind_; }
  const std::string& doc_text() const { return doc_; }
  bool is_required() const { return required_; }
  bool is_nullable() const { return nullable_; }
  const std::optional<Value>& default_value() const { return default_; }
  const std::vector<std::string>& choices() const { return choices_; }
  const std::vector<Field>& fields() const { return fields_; }
  const Schema* element() const { return element_.get(); }
  const std::string& discriminator() const { return discriminator_; }
  const std::string& default_variant() const { return default_variant_; }
  struct VariantRule {
    std::string key;
    bool value = false;
    std::string variant;
  };
  const std::vector<VariantRule>& variant_rules() const { return variant_rules_; }
  // The variants given to variants(), or a component's registered ones.
  const std::vector<std::pair<std::string, std::vector<Field>>>& variant_fields() const;
  const std::string& component_kind() const { return component_kind_; }
  bool accepts_single() const { return single_as_list_; }
  const std::string& name() const { return name_; }
  // Human-readable constraint summary for docs: "> 0", "length 6", "one of: a, b".
  std::string constraints() const;
  // "bool", "int", "number", "string", "list of number", "mapping", ...
  std::string type_name() const;

  // Checks `v` (the value at dotted `key`) and fills defaults into it. Problems are appended to
  // `issues`; nothing is thrown.
  void validate(Value& v, const std::string& key, std::vector<Issue>& issues) const;

 private:
  explicit Schema(Kind kind) : kind_(kind) {}
  void validate_map(Value& v, const std::string& key, std::vector<Issue>& issues) const;
  // For key `k` unknown to `variant` of the mapping at `key`: which other variants have it, or
  // "" when none does.
  std::string other_variants_key_message(const std::string& k, const std::string& variant,
                                         const std::string& key) const;
  void check_number(const Value& v, const std::string& key, std::vector<Issue>& issues) const;

  Kind kind_;
  std::string doc_;
  bool required_ = false;
  bool nullable_ = false;
  std::optional<Value> default_;
  std::optional<double> min_, max_;
  bool min_exclusive_ = false, max_exclusive_ = false;
  std::vector<std::string> choices_;
  std::optional<std::size_t> length_, min_length_;
  bool single_as_list_ = false;
  std::shared_ptr<const Schema> element_;
  std::vector<Field> fields_;
  std::string discriminator_;
  std::string default_variant_;
  std::vector<VariantRule> variant_rules_;
  std::vector<std::pair<std::string, std::vector<Field>>> variants_;
  std::string component_kind_;
  std::string name_;
};

// The schema of ddp3d's training configs (worker/config/ddp3d_schema.cpp).
const Schema& ddp3d_schema();

// Markdown reference of `schema`: one table per top-level key (docs/configs.md embeds it).
std::string schema_markdown(const Schema& schema);

}  // namespace ddp3d::config
