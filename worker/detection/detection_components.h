// Registers 3D detection's components with the engine's registries: the PointPillars model,
// the KittiDataset / SyntheticKitti / RepeatDataset datasets and the KittiMetric evaluator.
#pragma once

#include "worker/engine/registry.h"

namespace ddp3d::detection {

void register_detection_components(engine::Registry<engine::Model>& models,
                                   engine::Registry<engine::Dataset>& datasets,
                                   engine::Registry<engine::Evaluator>& evaluators);

}  // namespace ddp3d::detection
