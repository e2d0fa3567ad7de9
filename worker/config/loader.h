// Reads a config file with its `_base_` chain into one merged tree (no overrides, no schema).
#pragma once

#include <filesystem>
#include <string>

#include "worker/config/value.h"

namespace ddp3d::config {

// Loads `file` (shown in messages as `name`): its `_base_` files (a string or a list of paths
// relative to the file) are loaded recursively and merged in order, then the file on top.
// Missing files and cycles are ConfigErrors naming the chain of files that led there.
Value load_tree(const std::filesystem::path& file, const std::string& name);

// The same for YAML text; relative `_base_` paths resolve against `base_dir`.
Value load_tree_from_text(std::string_view text, const std::string& name,
                          const std::filesystem::path& base_dir);

}  // namespace ddp3d::config
