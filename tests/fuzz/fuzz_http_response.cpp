// libFuzzer: whatever a pod sends back to the operator's progress probe, read whole. Errors
// are returned, not thrown, so any exception is a finding too; a body is never larger than
// the limit.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "operator/probe/http_response.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view raw(reinterpret_cast<const char*>(data), size);
  constexpr std::size_t kLimit = 4096;
  const auto r = ddp3d::op::probe::parse_http_response(raw, kLimit);
  if (r.error.empty() && r.body.size() > kLimit) std::abort();
  return 0;
}
