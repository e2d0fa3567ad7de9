#include "worker/config/json.h"

#include <cmath>
#include <cstdio>

#include "common/json_string.h"

namespace ddp3d::config {
namespace {

void quote(const std::string& s, std::string& out) {
  out += json_quoted(s);
}

void write(const Value& v, std::string& out) {
  switch (v.kind()) {
    case Value::Kind::kNull:
      out += "null";
      return;
    case Value::Kind::kBool:
      out += v.as_bool() ? "true" : "false";
      return;
    case Value::Kind::kInt:
      out += std::to_string(v.as_int());
      return;
    case Value::Kind::kFloat:
      out += std::isfinite(v.as_double()) ? format_double(v.as_double()) : "null";
      return;
    case Value::Kind::kString:
      quote(v.as_string(), out);
      return;
    case Value::Kind::kList:
      out += '[';
      for (std::size_t i = 0; i < v.items().size(); ++i) {
        if (i != 0) out += ',';
        write(v.items()[i], out);
      }
      out += ']';
      return;
    case Value::Kind::kMap:
      out += '{';
      for (std::size_t i = 0; i < v.entries().size(); ++i) {
        if (i != 0) out += ',';
        quote(v.entries()[i].first, out);
        out += ':';
        write(v.entries()[i].second, out);
      }
      out += '}';
      return;
  }
}

}  // namespace

std::string to_json(const Value& value) {
  std::string out;
  write(value, out);
  return out;
}

}  // namespace ddp3d::config
