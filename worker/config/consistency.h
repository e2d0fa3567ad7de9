// Checks across keys that the per-key schema cannot express: each registered component's own
// check (component_schemas(): e.g. PointPillars' channel counts, anchors and grid), and that
// schedule phases are well-formed. Run after schema validation succeeded (so every key has its
// type).
#pragma once

#include <vector>

#include "worker/config/config.h"
#include "worker/config/value.h"

namespace ddp3d::config {

// Appends one issue per inconsistency; each names the dotted key and the file that set it.
void check_consistency(const Value& root, std::vector<Issue>& issues);

}  // namespace ddp3d::config
