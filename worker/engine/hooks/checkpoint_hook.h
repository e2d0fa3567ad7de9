// mmengine's CheckpointHook: after every `interval`-th epoch and after the last one, saves
// <work_dir>/epoch_<N>.pth through the loop (which writes it on rank 0 and calls the
// before/after_save_checkpoint hooks), points <work_dir>/last_checkpoint at it and deletes all
// but the newest `max_keep` checkpoints.
#pragma once

#include <cstdint>
#include <filesystem>

#include "worker/engine/hook.h"
#include "worker/engine/train_log.h"

namespace ddp3d::engine {

struct CheckpointHookOptions {
  std::filesystem::path work_dir;
  std::int64_t interval = 1;  // epochs; <= 0: only after the last epoch
  int max_keep = -1;          // <= 0: keep all
};

class CheckpointHook final : public Hook {
 public:
  // `log` must outlive the hook.
  CheckpointHook(CheckpointHookOptions options, TrainLog& log);

  void after_train_epoch(LoopContext& loop) override;
  void after_save_checkpoint(LoopContext& loop, const SavedCheckpoint& saved) override;

  // True when the checkpoint is due after `epochs_done` of `max_epochs`.
  bool due(std::int64_t epochs_done, std::int64_t max_epochs) const;

 private:
  CheckpointHookOptions options_;
  TrainLog& log_;
};

}  // namespace ddp3d::engine
