#include "common/local_time.h"

#include <vector>

namespace ddp3d {

std::string format_local_time(std::time_t t, const char* format) {
  std::tm tm{};
  localtime_r(&t, &tm);
  // strftime returns 0 both for an output that does not fit and for an empty one; a format
  // gives at most a few hundred characters per conversion, so the buffer grows a few times.
  for (std::size_t size = 64; size <= std::size_t{64} * 1024; size *= 4) {
    std::vector<char> buf(size);
    const std::size_t n = std::strftime(buf.data(), buf.size(), format, &tm);
    if (n > 0) return {buf.data(), n};
  }
  return {};
}

std::string format_local_now(const char* format) {
  return format_local_time(std::time(nullptr), format);
}

}  // namespace ddp3d
