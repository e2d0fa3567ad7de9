// ddp3d gloo_compat: see ../README.md. ProcessGroupGloo holds gloo::Context by pointer; the
// one member its inline code names is declared here (defined in libtorch_cpu's gloo). The
// class is never created, copied or sized by ddp3d.
#pragma once

#include <chrono>

namespace gloo {

class Context {
 public:
  void setTimeout(std::chrono::milliseconds timeout);
};

}  // namespace gloo
