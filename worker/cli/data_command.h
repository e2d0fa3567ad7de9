// `ddp3d data synth-kitti OUT [--scenes N] [--seed S] [--val-fraction F]`: writes a synthetic
// dataset in the KITTI layout (see worker/data/synthetic_kitti.h).
#pragma once

namespace ddp3d::cli {

// argv[0] is "data". Returns the process exit code.
int run_data(int argc, char** argv);

}  // namespace ddp3d::cli
