// libFuzzer: a pod's /metrics body as the operator's progress parser reads it. Whatever it
// takes must be a finite, non-negative step count no larger than 2^53 (its contract).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string_view>

#include "operator/controller/progress_metrics.h"

namespace {
void check(const std::optional<double>& v) {
  if (v && (!std::isfinite(*v) || *v < 0 || *v > 9007199254740992.0)) std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto m = ddp3d::op::controller::parse_progress_metrics(
      std::string_view(reinterpret_cast<const char*>(data), size));
  check(m.steps);
  check(m.epoch);
  check(m.max_steps);
  return 0;
}
