// The folder `ddp3d test --show-dir DIR` writes its pictures to, made and proven writable
// before any process group starts, so a bad DIR costs no evaluation.
#pragma once

#include <filesystem>

namespace ddp3d::engine {

// Creates DIR (and its parents) and writes and removes a probe file there. Throws
// std::runtime_error naming --show-dir, DIR and the reason (not a folder, read-only, ...).
void prepare_show_dir(const std::filesystem::path& dir);

}  // namespace ddp3d::engine
