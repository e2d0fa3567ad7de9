#include "common/metrics/exposition.h"

#include <charconv>
#include <cmath>

namespace ddp3d::metrics {
namespace {

const char* type_word(MetricType type) {
  switch (type) {
    case MetricType::kCounter:
      return "counter";
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kHistogram:
      return "histogram";
  }
  return "untyped";
}

}  // namespace

std::string format_value(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  // Shortest round-trip form, e.g. "0.1", "3", "1e+21": Go's ParseFloat reads all of them.
  char buf[64];
  const auto result = std::to_chars(buf, buf + sizeof(buf), value);
  return std::string(buf, result.ptr);
}

std::string escape_help(std::string_view help) {
  std::string out;
  out.reserve(help.size());
  for (char c : help) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string escape_label_value(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string write_text(const std::vector<FamilySnapshot>& families) {
  std::string out;
  for (const auto& family : families) {
    out += "# HELP ";
    out += family.name;
    out += ' ';
    out += escape_help(family.help);
    out += "\n# TYPE ";
    out += family.name;
    out += ' ';
    out += type_word(family.type);
    out += '\n';
    for (const auto& sample : family.samples) {
      out += family.name;
      out += sample.suffix;
      if (!sample.labels.empty()) {
        out += '{';
        bool first = true;
        for (const auto& [name, value] : sample.labels) {
          if (!first) out += ',';
          first = false;
          out += name;
          out += "=\"";
          out += escape_label_value(value);
          out += '"';
        }
        out += '}';
      }
      out += ' ';
      out += format_value(sample.value);
      out += '\n';
    }
  }
  return out;
}

}  // namespace ddp3d::metrics
