#include "worker/engine/hooks/checkpoint_hook.h"

#include <string>
#include <utility>

#include "worker/engine/checkpoint_file.h"

namespace ddp3d::engine {

CheckpointHook::CheckpointHook(CheckpointHookOptions options, TrainLog& log)
    : options_(std::move(options)), log_(log) {}

bool CheckpointHook::due(std::int64_t epochs_done, std::int64_t max_epochs) const {
  const std::int64_t every = options_.interval;
  return (every > 0 && epochs_done % every == 0) || epochs_done == max_epochs;
}

void CheckpointHook::after_train_epoch(LoopContext& loop) {
  const LoopProgress& p = loop.progress();
  if (!due(p.epochs_completed, p.max_epochs)) return;
  loop.save_checkpoint(options_.work_dir /
                       ("epoch_" + std::to_string(p.epochs_completed) + ".pth"));
}

void CheckpointHook::after_save_checkpoint(LoopContext& loop, const SavedCheckpoint& saved) {
  // Bookkeeping for every checkpoint the loop writes (this hook's or another's), on the rank
  // that wrote it.
  if (!saved.written) return;
  write_last_checkpoint(options_.work_dir, saved.path);
  for (const auto& removed : remove_old_checkpoints(options_.work_dir, options_.max_keep,
                                                    loop.progress().iters_per_epoch)) {
    log_.info("removed old checkpoint " + removed.string());
  }
  log_.info("saved checkpoint " + saved.path.string());
}

}  // namespace ddp3d::engine
