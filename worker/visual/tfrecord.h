// TFRecord framing, the container of TensorBoard's event files: per record
//   uint64 length (little-endian), uint32 masked CRC-32C of those 8 bytes,
//   `length` bytes of data, uint32 masked CRC-32C of the data.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ddp3d::visual {

// One framed record holding `data`.
std::string frame_tfrecord(std::string_view data);

// The records of a whole file, in order. Throws std::runtime_error naming the record's index
// and byte offset on a truncated record or a checksum mismatch.
std::vector<std::string> read_tfrecords(std::string_view file_bytes);

}  // namespace ddp3d::visual
