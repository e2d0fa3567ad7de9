// Whole-file reads and atomic writes for the small text and binary files of a dataset.
#pragma once

#include <string>

namespace ddp3d::data {

// Throws std::runtime_error naming the path when the file cannot be read.
std::string read_file(const std::string& path);
// Writes via a temporary file and rename, so readers never see half a file.
void write_file_atomically(const std::string& path, const std::string& contents);

}  // namespace ddp3d::data
