// The components the ddp3d binary ships, registered in one place: the binary calls
// register_builtin_components() before it reads a config; the config tool and the tests that
// only validate configs call register_builtin_schemas(). Both are idempotent.
#pragma once

namespace ddp3d::components {

// The schemas of PointPillars and its parts and of the toy (config::component_schemas()).
void register_builtin_schemas();
// The schemas, and the factories: PointPillars, the KITTI datasets and metric
// (worker/detection), and the toy (worker/engine/toy).
void register_builtin_components();

}  // namespace ddp3d::components
