// Prometheus text exposition format 0.0.4 writer (pure: snapshots in, text out).
// https://prometheus.io/docs/instrumenting/exposition_formats/
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/metrics/snapshot.h"

namespace ddp3d::metrics {

// The Content-Type a /metrics handler must send with write_text()'s output.
inline constexpr const char* kTextContentType = "text/plain; version=0.0.4; charset=utf-8";

// Shortest text that parses back to the same double; "NaN", "+Inf", "-Inf" for specials.
std::string format_value(double value);
// HELP text: backslash -> "\\", newline -> "\n". Both escapers also replace each byte that
// is not part of valid UTF-8 with U+FFFD, since Prometheus rejects invalid UTF-8.
std::string escape_help(std::string_view help);
// Label value: backslash -> "\\", double quote -> "\"", newline -> "\n".
std::string escape_label_value(std::string_view value);

// "# HELP", "# TYPE" and one line per sample for each family, in the given order.
std::string write_text(const std::vector<FamilySnapshot>& families);

}  // namespace ddp3d::metrics
