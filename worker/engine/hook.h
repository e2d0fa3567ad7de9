// Hooks: what runs around the train loop's steps (mmengine's Hook). The loop (train_loop.h)
// calls every registered hook, in priority order, at each point below; logging, metrics,
// checkpoints, timers and the lr schedule are hooks (hooks/), and a new concern — a stall
// heartbeat, a non-finite-loss guard, checkpoint-on-signal — is one more hook, not a change to
// the loop.
//
// Points, in the order one epoch reaches them:
//   after_load_checkpoint         (a resumed run)
//   before_train
//     before_train_epoch
//       before_train_iter → forward → after_train_forward → update → after_train_iter
//       on_signal                   (at the iteration boundary after a signal was noted)
//       ...
//     after_train_epoch             (a checkpoint hook saves here: before/after_save_checkpoint)
//     before_val → after_val        (when validation is due)
//   after_train
// A hook that needs something besides these arguments (a log, the optimizer) gets it when it
// is constructed. Hooks run on the training thread; a hook that blocks stalls training.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "worker/engine/checkpoint.h"
#include "worker/engine/evaluator.h"
#include "worker/engine/loop_progress.h"
#include "worker/engine/model.h"
#include "worker/engine/optim_wrapper.h"
#include "worker/engine/run_context.h"
#include "worker/engine/sample.h"

namespace ddp3d::engine {

struct DrawOptions;

// One training iteration as its hooks see it. Fields fill as the iteration advances; a hook may
// publish a value for the hooks after it (lower priority) where noted.
struct TrainIter {
  // This iteration's batch, on the training device. When a rank trains its share of the
  // iteration in micro-batches (a run resumed below its batch world size), the micro-batch
  // being trained: the first in before_train_iter, the last afterwards.
  const Batch* batch = nullptr;
  // The samples this rank trains in this iteration (dataset indices, in order), and the
  // number of micro-batches they are trained in (1 at the batch world size).
  std::vector<std::int64_t> sample_indices;
  std::int64_t micro_batches = 1;
  // The lr and momentum it trains with (read after before_train_iter, i.e. after scheduling).
  double lr = 0;
  double momentum = 0;
  // After forward: every term the model returned and their back-propagated sum. Trained in
  // micro-batches: each micro-batch's terms weighted by its share of the iteration's samples
  // (× world size) and summed, so their mean over ranks is the iteration's mean; only the last
  // micro-batch's part still carries autograd history (the others ran backward already).
  LossMap losses;
  at::Tensor total_loss;
  // Set by an after_train_forward hook (e.g. a non-finite-loss guard): no backward and no step
  // this iteration, and the gradients accumulated so far in its accumulation group are
  // dropped. Under DDP every rank must make the same decision (the hook agrees on it with a
  // collective), or the ranks' collectives no longer match.
  bool skip = false;
  std::string skip_reason;
  UpdateResult update;  // after the update (default when skipped)
  // After the update: this rank's values to log, "loss" (the total) first, then every other
  // term in name order (mmengine's log_vars).
  std::vector<std::pair<std::string, double>> log_vars;
  // Published by IterTimerHook: seconds waiting for this batch (before_train_iter) and seconds
  // since the previous iteration ended, data loading included (after_train_iter).
  double data_seconds = 0;
  double iter_seconds = 0;
  // Published by LoggerHook on the iterations it logs: this rank's mean total loss over the
  // logging window (before the mean over ranks).
  std::optional<double> window_mean_loss;
};

struct ValResult {
  MetricMap metrics;       // rank 0's; empty on the other ranks
  std::int64_t iters = 0;  // evaluation batches per rank
};

struct SavedCheckpoint {
  std::filesystem::path path;
  bool written = false;  // this rank wrote it (rank 0); the others only took part
};

// What the loop offers its hooks besides the call arguments.
class LoopContext {
 public:
  virtual ~LoopContext() = default;
  virtual const LoopProgress& progress() const = 0;
  virtual const RunContext& run_context() const = 0;
  // Stops training at the next boundary: the current iteration finishes, then nothing more
  // runs but after_train (no further iterations, no after_train_epoch for an unfinished epoch,
  // no validation). The first reason is kept.
  virtual void request_stop(const std::string& reason) = 0;
  virtual std::optional<std::string> stop_reason() const = 0;
  // Saves the current state (model, optimizer, counters, scaler, RNG) to `path`: calls
  // before_save_checkpoint on every hook (which may amend the state), writes the file on rank
  // 0, then calls after_save_checkpoint. Every rank must call it (hooks may use collectives).
  virtual void save_checkpoint(const std::filesystem::path& path) = 0;
  // Has rank 0 draw `draw`'s validation frames at every validation from now on (where its
  // evaluator can draw); a loop that does not validate ignores it.
  virtual void draw_validation(const DrawOptions& /*draw*/) {}
};

// mmengine's priorities: lower runs first; equal priorities run in registration order.
enum class HookPriority : int {
  kHighest = 0,
  kVeryHigh = 10,
  kHigh = 30,
  kAboveNormal = 40,
  kNormal = 50,
  kBelowNormal = 60,
  kLow = 70,
  kVeryLow = 90,
  kLowest = 100,
};

class Hook {
 public:
  virtual ~Hook() = default;
  virtual void before_train(LoopContext& /*loop*/) {}
  virtual void after_train(LoopContext& /*loop*/) {}
  virtual void before_train_epoch(LoopContext& /*loop*/) {}
  virtual void after_train_epoch(LoopContext& /*loop*/) {}
  virtual void before_train_iter(LoopContext& /*loop*/, TrainIter& /*iter*/) {}
  // Losses are known, backward has not run: the place to inspect or veto (iter.skip).
  virtual void after_train_forward(LoopContext& /*loop*/, TrainIter& /*iter*/) {}
  virtual void after_train_iter(LoopContext& /*loop*/, TrainIter& /*iter*/) {}
  virtual void before_val(LoopContext& /*loop*/) {}
  virtual void after_val(LoopContext& /*loop*/, const ValResult& /*result*/) {}
  virtual void before_save_checkpoint(LoopContext& /*loop*/, TrainingState& /*state*/) {}
  virtual void after_save_checkpoint(LoopContext& /*loop*/, const SavedCheckpoint& /*saved*/) {}
  // A resumed run, before before_train: the state the checkpoint held (model and optimizer are
  // loaded already), so a hook can take back what it put in before_save_checkpoint.
  virtual void after_load_checkpoint(LoopContext& /*loop*/, const TrainingState& /*state*/) {}
  // A signal noted in the loop's PendingSignal (pending_signal.h), delivered on the training
  // thread at the next iteration boundary of this rank (ranks may see it at different
  // iterations; a hook that stops them together agrees on an iteration with a collective).
  virtual void on_signal(LoopContext& /*loop*/, int /*signal*/) {}
};

}  // namespace ddp3d::engine
