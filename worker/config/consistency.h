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

// Whether `train_cfg` (the mapping) selects mmengine's IterBasedTrainLoop: by its `type` when
// set, else by `by_epoch: false` (mmengine's older spelling); otherwise it is an
// EpochBasedTrainLoop.
bool iteration_based_train_loop(const Config& train_cfg);

}  // namespace ddp3d::config
