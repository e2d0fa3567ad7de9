// A validation or parse error tied to the JSON path of the offending field, the way the API
// server reports them ("spec.runPolicy.backoffLimit: must be >= 0").
#pragma once

#include <string>
#include <vector>

namespace ddp3d::op::api {

struct FieldError {
  std::string path;
  std::string message;
  std::string to_string() const { return path + ": " + message; }
  bool operator==(const FieldError&) const = default;
};

// "a: x; b: y" — one line for a status message or a log line.
std::string join(const std::vector<FieldError>& errors);

}  // namespace ddp3d::op::api
