// YAML text <-> config tree, the only place that touches yaml-cpp.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "worker/config/value.h"

namespace ddp3d::config {

// Parses one YAML document. `name` labels origins and errors (a path as the user wrote it).
// Plain scalars are typed by YAML 1.2's core schema; quoted scalars stay strings. Duplicate keys
// and non-scalar keys are errors. An empty document is null. Aliases are expanded, at most 64
// levels deep and 100000 values in all (a cyclic alias or an alias bomb is a ConfigError naming
// file:line). Throws ConfigError.
Value parse_yaml(std::string_view text, const std::string& name);

// Config files are small; anything larger is a mistake (a dataset named as the config).
inline constexpr std::uint64_t kMaxConfigFileBytes = 4 * 1024 * 1024;

// Reads and parses `path`; `name` labels origins. A missing or unreadable file, one that is not a
// regular file (a FIFO, a directory, /dev/zero) or one over kMaxConfigFileBytes is a ConfigError.
Value read_yaml_file(const std::filesystem::path& path, const std::string& name);

// Block-style YAML for `v`; lists of scalars go in flow style. Strings that would read back as
// another type are quoted, floats keep a decimal point, so parse_yaml(write_yaml(v)) == v.
std::string write_yaml(const Value& v);

}  // namespace ddp3d::config
