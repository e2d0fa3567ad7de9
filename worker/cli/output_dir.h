// A folder `ddp3d test` writes into (--show-dir, --submission-dir), made and proven writable
// before any process group starts, so a bad one costs no evaluation.
#pragma once

#include <filesystem>
#include <string_view>

namespace ddp3d::cli {

// Creates DIR (and its parents) and writes and removes a probe file there. Throws
// std::runtime_error naming `flag`, DIR and the reason (not a folder, read-only, ...).
void prepare_output_dir(std::string_view flag, const std::filesystem::path& dir);

}  // namespace ddp3d::cli
