// Checkpoint on SIGTERM (Kubernetes' pod termination, a drain, a preemption): a rank that
// received SIGTERM or SIGINT says so at its next update boundary, the ranks agree on it with a
// 1-element all-reduce there (they may have seen the signal at different iterations), and then
// all of them, at the same iteration, save <work_dir>/iter_<N>.pth (N: iterations completed)
// and stop before running it. The process then exits with exit_code::kPreempted, and
// `--resume auto` continues at that very sample (train_loop.h).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>

#include "worker/engine/hook.h"
#include "worker/engine/train_log.h"

namespace ddp3d::engine {

class PreemptionHook final : public Hook {
 public:
  // How many ranks were signalled, and which one when it is one (-1 otherwise).
  struct Vote {
    int ranks = 0;
    int rank = -1;
  };
  // Every rank's `mine`, counted. The default agrees over the loop's process group (one
  // 2-element all-reduce); tests inject their own peers.
  using AnyRank = std::function<Vote(bool mine)>;

  // `accumulative_counts`: only a boundary between updates is a stopping point (a checkpoint
  // inside an accumulation group would lose its gradients). `log` must outlive the hook.
  PreemptionHook(std::filesystem::path work_dir, std::int64_t accumulative_counts, TrainLog& log,
                 AnyRank any_rank = {});

  void on_signal(LoopContext& loop, int signal) override;
  void before_train_iter(LoopContext& loop, TrainIter& iter) override;

  // The signal that stopped training (0: it was not stopped by one).
  int stopped_by() const { return stopped_by_; }

 private:
  std::filesystem::path work_dir_;
  std::int64_t accumulative_counts_;
  TrainLog& log_;
  AnyRank any_rank_;
  int signal_ = 0;  // this rank's
  int stopped_by_ = 0;
};

}  // namespace ddp3d::engine
