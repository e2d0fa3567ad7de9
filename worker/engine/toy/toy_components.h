// The smallest honest training problem the engine runs end to end (the README's main job):
// a small MLP regressor (`ToyRegressor`) on deterministic synthetic data
// (`SyntheticRegression`), scored by `RegressionMetric` (MSE/MAE). They go through the same
// interfaces and registries as PointPillars and KITTI.
#pragma once

namespace ddp3d::engine {

// Adds ToyRegressor, SyntheticRegression and RegressionMetric to the registries.
void register_toy_components();

}  // namespace ddp3d::engine
