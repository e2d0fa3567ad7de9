// Whole-file reads and atomic writes for the files of a dataset, with the size limits of each
// kind of file (common/io does the checking: regular file, size bound, no FIFO hang).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/io/regular_file.h"

namespace ddp3d::data {

// Per-kind bounds: far above real KITTI files (a scan is ~2 MB, a label file a few KB).
inline constexpr std::uint64_t kMaxVelodyneBytes = 256 * io::kMiB;
inline constexpr std::uint64_t kMaxLabelBytes = 4 * io::kMiB;
inline constexpr std::uint64_t kMaxCalibBytes = 1 * io::kMiB;
inline constexpr std::uint64_t kMaxSplitListBytes = 64 * io::kMiB;
inline constexpr std::uint64_t kMaxGtIndexBytes = 1 * io::kGiB;

// Throws ddp3d::io::FileError (a std::runtime_error) naming the path when the file cannot be
// read, is not a regular file or is over `max_bytes`; `what` names the kind of file.
std::string read_file(const std::string& path, std::uint64_t max_bytes, std::string_view what);

}  // namespace ddp3d::data
