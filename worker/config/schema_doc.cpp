// Markdown reference generated from a Schema, so docs/configs.md cannot drift from the code.
#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "worker/config/schema.h"

namespace ddp3d::config {
namespace {

std::string inline_value(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kString:
      return v.as_string();
    case Value::Kind::kList: {
      std::string s = "[";
      for (std::size_t i = 0; i < v.items().size(); ++i) {
        s += (i ? ", " : "") + inline_value(v.items()[i]);
      }
      return s + "]";
    }
    case Value::Kind::kMap: {
      std::string s = "{";
      for (std::size_t i = 0; i < v.entries().size(); ++i) {
        s += (i ? ", " : "") + v.entries()[i].first + ": " + inline_value(v.entries()[i].second);
      }
      return s + "}";
    }
    default:
      return v.describe();
  }
}

std::string anchor(const std::string& name) {
  std::string a;
  for (char c : name) a += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  return a;
}

class Writer {
 public:
  // Rows for `s` at `key`; `when` is the variant condition that brings the key into existence.
  void rows(const Schema& s, const std::string& key, const std::string& when, bool top,
            std::ostringstream& out) {
    if (!top && !s.name().empty()) {
      row(s, key, when, "See [" + s.name() + "](#" + anchor(s.name()) + ").", out);
      remember(&s);
      return;
    }
    if (!key.empty()) row(s, key, when, "", out);
    const Schema* inner = &s;
    std::string prefix = key;
    if (s.kind() == Schema::Kind::kList && s.element()->kind() == Schema::Kind::kMap) {
      inner = s.element();
      prefix = key + "[]";
      if (!inner->name().empty()) {
        remember(inner);
        return;
      }
    }
    if (inner->kind() != Schema::Kind::kMap) return;
    const std::string dot = prefix.empty() ? "" : prefix + ".";
    if (!inner->discriminator().empty()) {
      std::vector<std::string> names;
      for (const auto& v : inner->variant_fields()) names.push_back(v.first);
      std::string doc = "selects the variant; the rows marked with it apply only to it";
      for (const Schema::VariantRule& rule : inner->variant_rules()) {
        doc += "; missing and `" + rule.key + ": " + (rule.value ? "true" : "false") +
               "`: " + rule.variant;
      }
      const Schema tag =
          inner->default_variant().empty()
              ? Schema::string().one_of(names).required().doc(doc)
              : Schema::string().one_of(names).def(inner->default_variant().c_str()).doc(doc);
      row(tag, dot + inner->discriminator(), when, "", out);
    }
    for (const Field& f : inner->fields()) rows(f.second, dot + f.first, when, false, out);
    const auto& variants = inner->variant_fields();
    const std::set<std::string> common = common_fields(variants, dot);
    if (!variants.empty()) {
      for (const Field& f : variants.front().second) {
        if (common.contains(f.first)) rows(f.second, dot + f.first, when, false, out);
      }
    }
    const std::string tag = dot + inner->discriminator() + "=";
    for (const auto& [variant, fields] : variants) {
      const std::string cond = tag + variant;
      for (const Field& f : fields) {
        if (!common.contains(f.first)) rows(f.second, dot + f.first, cond, false, out);
      }
    }
  }

  // The keys every variant has, described alike (the optimizers' lr, the optimizer wrappers'
  // optimizer): their rows apply whatever the variant, so they are written once.
  std::set<std::string> common_fields(
      const std::vector<std::pair<std::string, std::vector<Field>>>& variants,
      const std::string& dot) {
    std::set<std::string> common;
    if (variants.size() < 2) return common;
    std::map<std::string, std::pair<std::string, std::size_t>> seen;  // rows, variants alike
    for (const auto& [variant, fields] : variants) {
      for (const Field& f : fields) {
        std::ostringstream text;
        rows(f.second, dot + f.first, "\x01", false, text);
        auto [it, added] = seen.emplace(f.first, std::make_pair(text.str(), std::size_t{0}));
        if (it->second.first == text.str()) ++it->second.second;
      }
    }
    for (const auto& [key, alike] : seen) {
      if (alike.second == variants.size()) common.insert(key);
    }
    return common;
  }

  void row(const Schema& s, const std::string& key, const std::string& when,
           const std::string& extra, std::ostringstream& out) {
    std::string desc = s.doc_text();
    if (!extra.empty()) desc += (desc.empty() ? "" : " ") + extra;
    out << "| `" << key << "` | " << (when.empty() ? "" : "`" + when + "`") << " | "
        << s.type_name() << " | "
        << (s.default_value() ? "`" + inline_value(*s.default_value()) + "`" : "") << " | "
        << s.constraints() << " | " << desc << " |\n";
  }

  // A named component used with different default types (default_hooks' keys) is described
  // once with none: each use's row says its own.
  void remember(const Schema* s) {
    const auto [it, added] = pending_.emplace(s->name(), s);
    if (!added && s->default_variant().empty()) it->second = s;
  }

  std::map<std::string, const Schema*> pending_;
};

constexpr const char* kHeader =
    "| key | when | type | default | constraints | description |\n"
    "|---|---|---|---|---|---|\n";

}  // namespace

std::string schema_markdown(const Schema& schema) {
  std::ostringstream out;
  Writer w;
  for (const Field& f : schema.fields()) {
    out << "### `" << f.first << "`\n\n";
    if (!f.second.doc_text().empty()) out << f.second.doc_text() << "\n\n";
    out << kHeader;
    w.rows(f.second, f.first, "", true, out);
    out << "\n";
  }
  // Shared sub-schemas, each once (they may name further ones).
  std::map<std::string, bool> done;
  while (true) {
    auto it = std::find_if(w.pending_.begin(), w.pending_.end(),
                           [&](const auto& p) { return !done[p.first]; });
    if (it == w.pending_.end()) break;
    done[it->first] = true;
    const Schema& s = *it->second;
    out << "### " << it->first << "\n\n";
    if (!s.doc_text().empty()) out << s.doc_text() << "\n\n";
    out << kHeader;
    w.rows(s, "", "", true, out);
    out << "\n";
  }
  return out.str();
}

}  // namespace ddp3d::config
