#include "worker/visual/tfrecord.h"

#include <cstdint>
#include <stdexcept>

#include "worker/visual/crc32c.h"

namespace ddp3d::visual {
namespace {

void append_le(std::string& out, std::uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xFFU));
}

std::uint64_t read_le(std::string_view bytes) {
  std::uint64_t value = 0;
  for (std::size_t i = bytes.size(); i-- > 0;) {
    value = (value << 8) | static_cast<unsigned char>(bytes[i]);
  }
  return value;
}

}  // namespace

std::string frame_tfrecord(std::string_view data) {
  std::string out;
  out.reserve(data.size() + 16);
  append_le(out, data.size(), 8);
  append_le(out, masked_crc32c(out), 4);
  out.append(data);
  append_le(out, masked_crc32c(data), 4);
  return out;
}

std::vector<std::string> read_tfrecords(std::string_view file_bytes) {
  std::vector<std::string> records;
  std::size_t offset = 0;
  while (offset < file_bytes.size()) {
    const std::string where =
        "TFRecord " + std::to_string(records.size()) + " at byte " + std::to_string(offset);
    const std::string_view rest = file_bytes.substr(offset);
    if (rest.size() < 12) throw std::runtime_error(where + ": truncated header");
    const std::uint64_t length = read_le(rest.substr(0, 8));
    if (read_le(rest.substr(8, 4)) != masked_crc32c(rest.substr(0, 8))) {
      throw std::runtime_error(where + ": length checksum mismatch");
    }
    if (rest.size() < 16 || length > rest.size() - 16) {
      throw std::runtime_error(where + ": truncated data (" + std::to_string(length) +
                               " bytes announced)");
    }
    const std::string_view data = rest.substr(12, length);
    if (read_le(rest.substr(12 + length, 4)) != masked_crc32c(data)) {
      throw std::runtime_error(where + ": data checksum mismatch");
    }
    records.emplace_back(data);
    offset += 16 + length;
  }
  return records;
}

}  // namespace ddp3d::visual
