// A config Value tree as JSON (for tools outside C++, e.g. the benchmark's PyTorch reference).
#pragma once

#include <string>

#include "worker/config/value.h"

namespace ddp3d::config {

// Compact JSON; floats round-trip exactly, NaN and infinities are written as null.
std::string to_json(const Value& value);

}  // namespace ddp3d::config
