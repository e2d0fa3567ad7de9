// ddp3d::Error: a runtime error that names what it is about (a file, a config key, a field),
// so a message read in a pod log points straight at the bad input.
#pragma once

#include <stdexcept>
#include <string>

namespace ddp3d {

class Error : public std::runtime_error {
 public:
  // what() reads "<context>: <message>", e.g. "configs/a.yaml: key 'lr' must be > 0".
  Error(std::string context, const std::string& message)
      : std::runtime_error(context.empty() ? message : context + ": " + message),
        context_(std::move(context)) {}

  const std::string& context() const noexcept { return context_; }

 private:
  std::string context_;
};

}  // namespace ddp3d
