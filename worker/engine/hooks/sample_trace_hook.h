// Records which samples every iteration trained (DDP3D_SAMPLE_TRACE=<dir>): each rank appends
// one JSON line per iteration to <dir>/samples_rank<R>.jsonl,
//   {"epoch": 2, "iter": 31, "world_size": 2, "rank": 0, "micro_batches": 2, "samples": [...]}
// (epoch and iter 1-based, iter global, as in the logs; samples are dataset indices in the
// order trained). The union over ranks of one iteration's lines is the iteration's global
// batch, at any world size: a check that a run resumed at another size trained the same data.
#pragma once

#include <filesystem>
#include <fstream>

#include "worker/engine/hook.h"

namespace ddp3d::engine {

class SampleTraceHook final : public Hook {
 public:
  // Creates `dir` and opens this rank's file for appending; throws std::runtime_error naming
  // the file when it cannot.
  SampleTraceHook(const std::filesystem::path& dir, int rank);

  void after_train_iter(LoopContext& loop, TrainIter& iter) override;

 private:
  std::filesystem::path path_;
  std::ofstream out_;
};

}  // namespace ddp3d::engine
