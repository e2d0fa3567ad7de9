#include "tests/unit/common/exposition_labels.h"

#include <cctype>
#include <stdexcept>

namespace ddp3d::metrics::test {
namespace {

bool name_char(char c, bool first, bool colon) {
  const auto u = static_cast<unsigned char>(c);
  return std::isalpha(u) != 0 || c == '_' || (colon && c == ':') || (!first && std::isdigit(u));
}

// The identifier at `pos` (moved past it); "" when there is none.
std::string_view identifier(std::string_view line, std::size_t& pos, bool colon) {
  const std::size_t start = pos;
  while (pos < line.size() && name_char(line[pos], pos == start, colon)) ++pos;
  return line.substr(start, pos - start);
}

[[noreturn]] void bad(std::string_view line, const char* what) {
  throw std::invalid_argument(std::string(what) + " in exposition line: " + std::string(line));
}

}  // namespace

const std::set<std::string>& scrape_target_labels() {
  static const std::set<std::string> labels = {"job",       "instance", "namespace", "pod",
                                               "container", "service",  "endpoint",  "node"};
  return labels;
}

std::map<std::string, std::set<std::string>> label_names(std::string_view exposition) {
  std::map<std::string, std::set<std::string>> out;
  while (!exposition.empty()) {
    const std::size_t eol = exposition.find('\n');
    const std::string_view line = exposition.substr(0, eol);
    exposition.remove_prefix(eol == std::string_view::npos ? exposition.size() : eol + 1);
    if (line.empty() || line.front() == '#') continue;
    std::size_t pos = 0;
    const std::string_view name = identifier(line, pos, true);
    if (name.empty()) bad(line, "no sample name");
    auto& labels = out[std::string(name)];
    if (pos < line.size() && line[pos] == '{') {
      ++pos;
      while (pos < line.size() && line[pos] != '}') {
        const std::string_view label = identifier(line, pos, false);
        if (label.empty()) bad(line, "no label name");
        if (pos + 1 >= line.size() || line[pos] != '=' || line[pos + 1] != '"') {
          bad(line, "no =\" after a label name");
        }
        pos += 2;
        while (pos < line.size() && line[pos] != '"') pos += line[pos] == '\\' ? 2 : 1;
        if (pos >= line.size()) bad(line, "unterminated label value");
        ++pos;
        labels.emplace(label);
        if (pos < line.size() && line[pos] == ',') ++pos;
      }
      if (pos >= line.size()) bad(line, "unterminated label set");
      ++pos;
    }
    if (pos >= line.size() || line[pos] != ' ') bad(line, "no value");
  }
  return out;
}

std::vector<std::string> scrape_label_collisions(std::string_view exposition) {
  std::vector<std::string> out;
  for (const auto& [name, labels] : label_names(exposition)) {
    for (const auto& label : labels) {
      if (scrape_target_labels().contains(label) || label.starts_with("__")) {
        out.push_back(name + "{" + label + "}");
      }
    }
  }
  return out;
}

}  // namespace ddp3d::metrics::test
