#include "worker/engine/hooks/checkpoint_hook.h"

#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "worker/engine/checkpoint_file.h"
#include "worker/engine/collectives.h"

namespace ddp3d::engine {
namespace {

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

CheckpointHook::CheckpointHook(CheckpointHookOptions options, TrainLog& log, AnyRank any_rank,
                               Clock clock)
    : options_(std::move(options)),
      log_(log),
      any_rank_(std::move(any_rank)),
      clock_(clock ? std::move(clock) : Clock(steady_seconds)) {
  if (options_.interval_seconds &&
      (!std::isfinite(*options_.interval_seconds) || *options_.interval_seconds <= 0)) {
    throw std::invalid_argument(
        "default_hooks.checkpoint.interval_seconds: must be a positive number of seconds");
  }
  if (options_.accumulative_counts < 1)
    throw std::invalid_argument("CheckpointHook: accumulative_counts must be >= 1");
}

bool CheckpointHook::due(std::int64_t epochs_done, std::int64_t max_epochs) const {
  const std::int64_t every = options_.interval;
  const bool interval_hit = options_.by_epoch && every > 0 && epochs_done % every == 0;
  return interval_hit || (options_.save_last && epochs_done == max_epochs);
}

void CheckpointHook::before_train(LoopContext& loop) {
  // The resume point is on disk already: the first slot this process saves is the next one.
  if (options_.interval > 0) saved_slot_ = loop.progress().global_iter / options_.interval;
  last_save_ = clock_();
}

bool CheckpointHook::time_due(LoopContext& loop) {
  if (!options_.interval_seconds) return false;
  const bool mine = clock_() - last_save_ >= *options_.interval_seconds;
  if (any_rank_) return any_rank_(mine);
  const RunContext& ctx = loop.run_context();
  if (ctx.pg == nullptr) return mine;
  return allreduce_mean(ctx.pg, {mine ? 1.0 : 0.0})[0] > 0;
}

void CheckpointHook::before_train_iter(LoopContext& loop, TrainIter& /*iter*/) {
  const LoopProgress& p = loop.progress();
  // A stop agreed on this boundary (preemption) has saved already, on every rank alike.
  if (p.global_iter % options_.accumulative_counts != 0 || loop.stop_reason()) return;
  // The first boundary at or after each multiple of the interval (with gradient accumulation
  // a multiple may fall inside an update).
  const bool by_iters = !options_.by_epoch && options_.interval > 0 &&
                        p.global_iter / options_.interval > saved_slot_;
  // Every rank takes part in the time vote at every boundary, whatever else is due.
  const bool by_time = time_due(loop);
  if ((!by_iters && !by_time) || p.global_iter == last_saved_iter_) return;
  if (options_.interval > 0) saved_slot_ = p.global_iter / options_.interval;
  loop.save_checkpoint(options_.work_dir / ("iter_" + std::to_string(p.global_iter) + ".pth"));
}

void CheckpointHook::after_train_epoch(LoopContext& loop) {
  const LoopProgress& p = loop.progress();
  if (options_.by_epoch) {
    if (!due(p.epochs_completed, p.max_epochs)) return;
    loop.save_checkpoint(options_.work_dir /
                         ("epoch_" + std::to_string(p.epochs_completed) + ".pth"));
    return;
  }
  // Iteration mode: the end of training has no next boundary, so the last one saves here.
  if (!options_.save_last || p.epochs_completed != p.max_epochs) return;
  const std::int64_t done = p.max_iters();
  if (done == last_saved_iter_) return;
  loop.save_checkpoint(options_.work_dir / ("iter_" + std::to_string(done) + ".pth"));
}

void CheckpointHook::after_save_checkpoint(LoopContext& loop, const SavedCheckpoint& saved) {
  // Every checkpoint the loop writes (this hook's or another's) restarts the time interval on
  // every rank; the bookkeeping below is the writing rank's.
  last_save_ = clock_();
  last_saved_iter_ = loop.progress().global_iter;
  if (!saved.written) return;
  write_last_checkpoint(options_.work_dir, saved.path);
  for (const auto& removed : remove_old_checkpoints(options_.work_dir, options_.max_keep,
                                                    loop.progress().iters_per_epoch)) {
    log_.info("removed old checkpoint " + removed.string());
  }
  log_.info("saved checkpoint " + saved.path.string());
}

}  // namespace ddp3d::engine
