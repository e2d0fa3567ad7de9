// Writes a whole file so that readers (and a later run) see the old contents or the new ones,
// never a prefix: a temp file in the same directory, every write and the close checked, fsync,
// rename over the target, fsync of the directory. A full disk (ENOSPC, EFBIG, EDQUOT) fails
// with an error naming the path and leaves neither a temp file nor an empty target behind. An
// existing target that is not a regular file (a device, a FIFO, a directory) is never replaced.
#pragma once

#include <filesystem>
#include <string_view>

namespace ddp3d::io {

// Throws ddp3d::io::FileError (common/io/regular_file.h) naming the path on any failure.
void write_file_atomically(const std::filesystem::path& path, std::string_view bytes);

}  // namespace ddp3d::io
