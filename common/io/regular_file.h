// Whole-file reads that hostile paths cannot turn into a hang or an unbounded allocation:
// the file must be a regular file (not a FIFO, a directory, a device such as /dev/zero or a
// socket) no larger than the caller's limit. A huge sparse file fails on its size, before a
// byte is read.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "common/error.h"

namespace ddp3d::io {

// what() reads "<path>: <why>", e.g. "data/000001.bin: velodyne scan is 2147483648 bytes, over
// the limit of 268435456 bytes" or "configs/a.yaml: config file is a FIFO, not a regular file".
class FileError : public Error {
 public:
  using Error::Error;
};

// Common limits (bytes): generous for real inputs, small enough that a mistake cannot exhaust
// memory.
inline constexpr std::uint64_t kKiB = 1024;
inline constexpr std::uint64_t kMiB = 1024 * kKiB;
inline constexpr std::uint64_t kGiB = 1024 * kMiB;

// Reads all of `path`. `what` names the kind of file in messages ("config file", "KITTI
// label file"). Opens with O_NONBLOCK so that a FIFO without a writer cannot block, checks
// S_ISREG and the size with fstat on the open descriptor (no race with a swapped path), and
// stops reading past `max_bytes` should the file grow meanwhile. Throws FileError naming the
// path, the kind and the limit.
std::string read_regular_file(const std::filesystem::path& path, std::uint64_t max_bytes,
                              std::string_view what);

}  // namespace ddp3d::io
