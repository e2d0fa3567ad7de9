#include "common/metrics/exposition.h"

#include <charconv>
#include <cmath>

namespace ddp3d::metrics {
namespace {

// Length of the valid UTF-8 sequence starting at s[i], or 0 if it is not valid (RFC 3629:
// no overlong forms, no surrogates, nothing above U+10FFFF).
std::size_t utf8_sequence_length(std::string_view s, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b0 = byte(i);
  if (b0 < 0x80) {
    return 1;
  }
  std::size_t len = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3;
    if (b0 == 0xE0) {
      lo = 0xA0;
    }
    if (b0 == 0xED) {
      hi = 0x9F;
    }
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4;
    if (b0 == 0xF0) {
      lo = 0x90;
    }
    if (b0 == 0xF4) {
      hi = 0x8F;
    }
  } else {
    return 0;
  }
  if (i + len > s.size()) {
    return 0;
  }
  if (byte(i + 1) < lo || byte(i + 1) > hi) {
    return 0;
  }
  for (std::size_t k = 2; k < len; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) {
      return 0;
    }
  }
  return len;
}

// Prometheus rejects a whole scrape over one invalid UTF-8 label value; a value taken from,
// say, an error message must not be able to do that, so each bad byte becomes U+FFFD.
template <class Escape>
std::string escape_utf8(std::string_view in, Escape escape) {
  std::string out;
  out.reserve(in.size());
  for (std::size_t i = 0; i < in.size();) {
    const std::size_t len = utf8_sequence_length(in, i);
    if (len == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
      ++i;
    } else if (len == 1) {
      escape(in[i], out);
      ++i;
    } else {
      out.append(in.substr(i, len));
      i += len;
    }
  }
  return out;
}

}  // namespace

std::string format_value(double value) {
  if (std::isnan(value)) {
    return "NaN";
  }
  if (std::isinf(value)) {
    return value > 0 ? "+Inf" : "-Inf";
  }
  // Shortest round-trip form, e.g. "0.1", "3", "1e+21": Go's ParseFloat reads all of them.
  char buf[64];
  const auto result = std::to_chars(buf, buf + sizeof(buf), value);
  return std::string(buf, result.ptr);
}

std::string escape_help(std::string_view help) {
  return escape_utf8(help, [](char c, std::string& out) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  });
}

std::string escape_label_value(std::string_view value) {
  return escape_utf8(value, [](char c, std::string& out) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  });
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
    out += metric_type_name(family.type);
    out += '\n';
    for (const auto& sample : family.samples) {
      out += family.name;
      out += sample.suffix;
      if (!sample.labels.empty()) {
        out += '{';
        bool first = true;
        for (const auto& [name, value] : sample.labels) {
          if (!first) {
            out += ',';
          }
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
