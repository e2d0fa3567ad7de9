#include "worker/data/text_file.h"

#include "common/io/atomic_file.h"

namespace ddp3d::data {

std::string read_file(const std::string& path, std::uint64_t max_bytes, std::string_view what) {
  return io::read_regular_file(path, max_bytes, what);
}

}  // namespace ddp3d::data
