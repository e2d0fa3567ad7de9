#include "worker/config/schema.h"

#include <algorithm>
#include <cmath>

#include "worker/config/component_schemas.h"

namespace ddp3d::config {
namespace {

const Origin kDefaultOrigin{"<schema default>", 0};

std::string join(const std::string& key, const std::string& child) {
  return key.empty() ? child : key + "." + child;
}

std::string format_bound(double d) {
  if (std::floor(d) == d && std::fabs(d) < 1e15) return std::to_string(static_cast<long long>(d));
  return format_double(d);
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      cur[j] =
          std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string unknown_key_message(const std::string& key, const std::vector<const Field*>& allowed) {
  const Field* best = nullptr;
  std::size_t best_distance = 3;
  for (const Field* f : allowed) {
    std::size_t d = edit_distance(key, f->first);
    // A truncated or extended name ("bucket_cap" for "bucket_cap_mb") is a likely typo too.
    const std::string& name = f->first;
    if (key.size() >= 3 && (name.starts_with(key) || key.starts_with(name)))
      d = std::min<std::size_t>(d, 2);
    if (d < best_distance) {
      best_distance = d;
      best = f;
    }
  }
  if (best != nullptr) return "unknown key (did you mean '" + best->first + "'?)";
  std::string names;
  for (const Field* f : allowed) names += (names.empty() ? "" : ", ") + f->first;
  return "unknown key (allowed here: " + names + ")";
}

std::string article_type(Schema::Kind kind) {
  switch (kind) {
    case Schema::Kind::kBool:
      return "true or false";
    case Schema::Kind::kInt:
      return "an integer";
    case Schema::Kind::kNumber:
      return "a number";
    case Schema::Kind::kString:
      return "a string";
    case Schema::Kind::kList:
      return "a list";
    case Schema::Kind::kMap:
    case Schema::Kind::kDict:
      return "a mapping";
  }
  return "?";
}

std::string join_names(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

}  // namespace

std::string Schema::other_variants_key_message(const std::string& k, const std::string& variant,
                                               const std::string& key) const {
  std::vector<std::string> owners;
  for (const auto& [name, fields] : variant_fields()) {
    if (name == variant) continue;
    if (std::any_of(fields.begin(), fields.end(), [&](const Field& f) { return f.first == k; }))
      owners.push_back(name);
  }
  if (owners.empty()) return {};
  return "not a key of " + variant + "; " + join_names(owners) +
         (owners.size() == 1 ? " has" : " have") + " it (set " + join(key, discriminator_) + ")";
}

Schema Schema::list(Schema element) {
  Schema s(Kind::kList);
  s.element_ = std::make_shared<const Schema>(std::move(element));
  return s;
}

Schema Schema::map(std::vector<Field> fields) {
  Schema s(Kind::kMap);
  s.fields_ = std::move(fields);
  return s;
}

Schema Schema::dict(Schema element) {
  Schema s(Kind::kDict);
  s.element_ = std::make_shared<const Schema>(std::move(element));
  return s;
}

Schema Schema::component(std::string kind, std::string default_type) {
  Schema s(Kind::kMap);
  s.component_kind_ = std::move(kind);
  s.default_variant_ = std::move(default_type);
  s.discriminator_ = "type";
  return s;
}

const std::vector<std::pair<std::string, std::vector<Field>>>& Schema::variant_fields() const {
  return component_kind_.empty() ? variants_ : component_schemas().variants(component_kind_);
}

Schema&& Schema::doc(std::string text) && {
  doc_ = std::move(text);
  return std::move(*this);
}
Schema&& Schema::required() && {
  required_ = true;
  return std::move(*this);
}
Schema&& Schema::nullable() && {
  nullable_ = true;
  return std::move(*this);
}
Schema&& Schema::def(Value v) && {
  default_ = std::move(v);
  default_->set_origin_recursive(kDefaultOrigin);
  return std::move(*this);
}
Schema&& Schema::def(bool b) && {
  return std::move(*this).def(Value::boolean(b));
}
Schema&& Schema::def(int i) && {
  return std::move(*this).def(Value::integer(i));
}
Schema&& Schema::def(double d) && {
  return std::move(*this).def(Value::real(d));
}
Schema&& Schema::def(const char* s) && {
  return std::move(*this).def(Value::string(s));
}
Schema&& Schema::def_list(std::vector<double> values) && {
  std::vector<Value> items;
  for (double d : values) items.push_back(Value::real(d));
  return std::move(*this).def(Value::list(std::move(items)));
}
Schema&& Schema::def_int_list(std::vector<int> values) && {
  std::vector<Value> items;
  for (int i : values) items.push_back(Value::integer(i));
  return std::move(*this).def(Value::list(std::move(items)));
}
Schema&& Schema::def_null() && {
  nullable_ = true;
  return std::move(*this).def(Value::null());
}
Schema&& Schema::def_empty_map() && {
  return std::move(*this).def(Value::map());
}
Schema&& Schema::min(double lo, bool exclusive) && {
  min_ = lo;
  min_exclusive_ = exclusive;
  return std::move(*this);
}
Schema&& Schema::max(double hi, bool exclusive) && {
  max_ = hi;
  max_exclusive_ = exclusive;
  return std::move(*this);
}
Schema&& Schema::one_of(std::vector<std::string> choices) && {
  choices_ = std::move(choices);
  return std::move(*this);
}
Schema&& Schema::length(std::size_t n) && {
  length_ = n;
  return std::move(*this);
}
Schema&& Schema::min_length(std::size_t n) && {
  min_length_ = n;
  return std::move(*this);
}
Schema&& Schema::single_as_list() && {
  single_as_list_ = true;
  return std::move(*this);
}
Schema&& Schema::variants(std::vector<std::pair<std::string, std::vector<Field>>> variants,
                          std::string default_variant, std::string key) && {
  variants_ = std::move(variants);
  default_variant_ = std::move(default_variant);
  discriminator_ = std::move(key);
  return std::move(*this);
}
Schema&& Schema::default_variant_if(std::string key, bool value, std::string variant) && {
  variant_rules_.push_back({std::move(key), value, std::move(variant)});
  return std::move(*this);
}
Schema&& Schema::named(std::string name) && {
  name_ = std::move(name);
  return std::move(*this);
}

std::string Schema::type_name() const {
  switch (kind_) {
    case Kind::kBool:
      return "bool";
    case Kind::kInt:
      return "int";
    case Kind::kNumber:
      return "number";
    case Kind::kString:
      return "string";
    case Kind::kList:
      return "list of " + element_->type_name();
    case Kind::kMap:
      return name_.empty() ? "mapping" : name_;
    case Kind::kDict:
      return "mapping of " + element_->type_name();
  }
  return "?";
}

std::string Schema::constraints() const {
  std::vector<std::string> parts;
  if (min_) parts.push_back((min_exclusive_ ? "> " : ">= ") + format_bound(*min_));
  if (max_) parts.push_back((max_exclusive_ ? "< " : "<= ") + format_bound(*max_));
  if (!choices_.empty()) parts.push_back("one of: " + join_names(choices_));
  if (length_) parts.push_back("length " + std::to_string(*length_));
  if (min_length_) parts.push_back("length >= " + std::to_string(*min_length_));
  if (kind_ == Kind::kList && element_) {
    const std::string inner = element_->constraints();
    if (!inner.empty()) parts.push_back("each " + inner);
  }
  if (single_as_list_) parts.push_back("a single mapping is taken as a list of one");
  if (required_) parts.push_back("required");
  if (nullable_) parts.push_back("may be null");
  std::string s;
  for (const std::string& p : parts) s += (s.empty() ? "" : "; ") + p;
  return s;
}

void Schema::check_number(const Value& v, const std::string& key,
                          std::vector<Issue>& issues) const {
  const double d = v.as_double();
  // No ddp3d setting means anything with NaN or infinity (a .nan learning rate trains on NaN).
  if (!std::isfinite(d)) {
    issues.push_back({v.origin().to_string(), key, "must be a finite number, got " + v.describe()});
    return;
  }
  if (min_ && (d < *min_ || (min_exclusive_ && d == *min_))) {
    issues.push_back({v.origin().to_string(), key,
                      "must be " + std::string(min_exclusive_ ? "> " : ">= ") +
                          format_bound(*min_) + ", got " + v.describe()});
  }
  if (max_ && (d > *max_ || (max_exclusive_ && d == *max_))) {
    issues.push_back({v.origin().to_string(), key,
                      "must be " + std::string(max_exclusive_ ? "< " : "<= ") +
                          format_bound(*max_) + ", got " + v.describe()});
  }
}

void Schema::validate(Value& v, const std::string& key, std::vector<Issue>& issues) const {
  if (v.is_null() && nullable_) return;
  auto wrong_type = [&] {
    issues.push_back(
        {v.origin().to_string(), key, "expected " + article_type(kind_) + ", got " + v.describe()});
  };
  switch (kind_) {
    case Kind::kBool:
      if (v.kind() != Value::Kind::kBool) wrong_type();
      return;
    case Kind::kInt:
      if (v.kind() != Value::Kind::kInt) return wrong_type();
      return check_number(v, key, issues);
    case Kind::kNumber:
      if (!v.is_number()) return wrong_type();
      return check_number(v, key, issues);
    case Kind::kString:
      if (v.kind() != Value::Kind::kString) return wrong_type();
      if (!choices_.empty() &&
          std::find(choices_.begin(), choices_.end(), v.as_string()) == choices_.end()) {
        issues.push_back({v.origin().to_string(), key,
                          "expected one of: " + join_names(choices_) + "; got " + v.describe()});
      }
      return;
    case Kind::kList: {
      if (v.is_map() && single_as_list_) {
        const Origin origin = v.origin();
        std::vector<Value> items;
        items.push_back(std::move(v));
        v = Value::list(std::move(items), origin);
      }
      if (!v.is_list()) return wrong_type();
      const std::size_t n = v.items().size();
      if (length_ && n != *length_) {
        issues.push_back({v.origin().to_string(), key,
                          "expected a list of length " + std::to_string(*length_) + ", got " +
                              std::to_string(n) + " elements"});
      }
      if (min_length_ && n < *min_length_) {
        issues.push_back({v.origin().to_string(), key,
                          "expected at least " + std::to_string(*min_length_) + " elements, got " +
                              std::to_string(n)});
      }
      for (std::size_t i = 0; i < n; ++i) {
        element_->validate(v.items()[i], join(key, std::to_string(i)), issues);
      }
      return;
    }
    case Kind::kDict:
      if (!v.is_map()) return wrong_type();
      for (auto& [k, child] : v.entries()) element_->validate(child, join(key, k), issues);
      return;
    case Kind::kMap:
      return validate_map(v, key, issues);
  }
}

void Schema::validate_map(Value& v, const std::string& key, std::vector<Issue>& issues) const {
  if (!v.is_map()) {
    issues.push_back({v.origin().to_string(), key, "expected a mapping, got " + v.describe()});
    return;
  }
  std::vector<const Field*> allowed;
  for (const Field& f : fields_) allowed.push_back(&f);
  // With a discriminator, the variant decides which further keys exist; when it cannot be
  // determined, keys that are not common to all variants are not reported (they may be fine).
  bool variant_known = discriminator_.empty();
  std::string variant;  // the one chosen, when known
  if (!discriminator_.empty()) {
    std::vector<std::string> names;
    for (const auto& variant : variant_fields()) names.push_back(variant.first);
    Value* tag = v.find(discriminator_);
    if (tag == nullptr) {
      std::string fallback = default_variant_;
      for (const VariantRule& rule : variant_rules_) {
        const Value* given = v.find(rule.key);
        if (given != nullptr && given->kind() == Value::Kind::kBool &&
            given->as_bool() == rule.value) {
          fallback = rule.variant;
          break;
        }
      }
      if (!fallback.empty()) {
        v.set(discriminator_, Value::string(fallback, kDefaultOrigin));
        tag = v.find(discriminator_);
      }
    }
    if (tag == nullptr) {
      issues.push_back({v.origin().to_string(), join(key, discriminator_),
                        "missing required key (one of: " + join_names(names) + ")"});
    } else if (tag->kind() != Value::Kind::kString ||
               std::find(names.begin(), names.end(), tag->as_string()) == names.end()) {
      issues.push_back({tag->origin().to_string(), join(key, discriminator_),
                        "expected one of: " + join_names(names) + "; got " + tag->describe()});
    } else {
      variant = tag->as_string();
      for (const auto& [name, fields] : variant_fields()) {
        if (name != variant) continue;
        for (const Field& f : fields) allowed.push_back(&f);
      }
      variant_known = true;
    }
  }
  for (auto& [k, child] : v.entries()) {
    if (!discriminator_.empty() && k == discriminator_) continue;
    const std::string& name = k;  // clang 14 cannot capture a structured binding
    const auto it = std::find_if(allowed.begin(), allowed.end(),
                                 [&](const Field* f) { return f->first == name; });
    if (it != allowed.end()) {
      (*it)->second.validate(child, join(key, k), issues);
    } else if (variant_known) {
      const std::string message =
          variant.empty() ? std::string() : other_variants_key_message(k, variant, key);
      issues.push_back({child.origin().to_string(), join(key, k),
                        message.empty() ? unknown_key_message(k, allowed) : message});
    }
  }
  for (const Field* f : allowed) {
    if (v.find(f->first) != nullptr) continue;
    const Schema& s = f->second;
    if (s.default_value()) {
      v.set(f->first, *s.default_value());
      s.validate(*v.find(f->first), join(key, f->first), issues);
    } else if (s.is_required()) {
      issues.push_back({v.origin().to_string(), join(key, f->first), "missing required key"});
    }
  }
}

}  // namespace ddp3d::config
