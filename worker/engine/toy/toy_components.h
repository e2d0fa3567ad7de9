// The smallest honest training problem the engine runs end to end (the README's main job):
// a small MLP regressor (`ToyRegressor`) on deterministic synthetic data
// (`SyntheticRegression`), scored by `RegressionMetric` (MSE/MAE). They go through the same
// interfaces and registries as PointPillars and KITTI. A target of its own (ddp3d_toy): the
// engine's tests use it as their fixture, and the binary registers it for the engine's quick
// check (configs/toy/).
#pragma once

namespace ddp3d::engine {

// Adds the factories of ToyRegressor, SyntheticRegression and RegressionMetric to the engine's
// registries (their schemas: register_toy_schemas).
void register_toy_components();

}  // namespace ddp3d::engine
