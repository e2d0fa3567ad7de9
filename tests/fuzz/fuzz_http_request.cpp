// libFuzzer: an HTTP request head as the metrics/health server receives it. Errors are
// returned, not thrown, so here any exception is a finding too.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/http/request.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  (void)ddp3d::http::parse_request_head(
      std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
