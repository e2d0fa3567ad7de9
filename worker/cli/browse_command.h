// `ddp3d data browse CONFIG --out DIR [--count N] [--augmented] [--seed S]
// [--cfg-options k=v ...]`: bird's-eye views of the training data, as the train pipeline makes
// them (mmdet3d's browse_dataset.py).
#pragma once

namespace ddp3d::cli {

// `argv[0]` is the config path (the words after `ddp3d data browse`). Exit code: 0, 1 on a
// failure while drawing, 2 on a usage or config error.
int run_browse(int argc, char** argv);

}  // namespace ddp3d::cli
