// The summary at the end of training (run_summary.h): wall time, samples/s, the best
// validation by the evaluator's key metric and its AP table, in the log and in
// <work_dir>/train_summary.json. Rank 0 writes; every rank counts (no collective: the ranks
// train the same number of samples each iteration).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <vector>

#include "worker/engine/hook.h"
#include "worker/engine/run_summary.h"
#include "worker/engine/train_log.h"

namespace ddp3d::engine {

class RunSummaryHook final : public Hook {
 public:
  // `log` and `evaluator` (may be null: no validation) must outlive the hook. `json_path`
  // empty: no file.
  RunSummaryHook(TrainLog& log, const Evaluator* evaluator, std::filesystem::path json_path);

  void before_train(LoopContext& loop) override;
  void after_train_iter(LoopContext& loop, TrainIter& iter) override;
  void after_val(LoopContext& loop, const ValResult& result) override;
  void after_train(LoopContext& loop) override;

  // What after_train wrote (for tests).
  const RunSummary& summary() const { return summary_; }

 private:
  TrainLog& log_;
  const Evaluator* evaluator_;
  std::filesystem::path json_path_;
  std::chrono::steady_clock::time_point start_;
  RunSummary summary_;
};

}  // namespace ddp3d::engine
