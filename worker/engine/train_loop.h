// The train loop: a short sequence of named steps with hook points between them (hook.h). Per
// epoch (a pass over the data): seed the epoch's RNG, open the loader, run its iterations
// (fetch → before_train_iter → forward → after_train_forward → update → after_train_iter → take
// a pending signal), after_train_epoch. Where it stops and when it validates is train_cfg's
// loop plan (loop_plan.h): an EpochBasedTrainLoop validates after epochs; an IterBasedTrainLoop
// passes over the data until its iterations are done, validates between iterations, and ends
// inside a pass without its after_train_epoch. What happens around the steps — logging,
// metrics, checkpoints, timing, scheduling — is in hooks.
// Below its batch world size (data_order.h) a rank trains its share of each iteration in
// micro-batches: every one but the last runs backward under DDP's no_sync, the hooks still see
// one iteration.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "worker/engine/data_order.h"
#include "worker/engine/dataset.h"
#include "worker/engine/eval_loop.h"
#include "worker/engine/evaluator.h"
#include "worker/engine/hook.h"
#include "worker/engine/loop_plan.h"
#include "worker/engine/model.h"
#include "worker/engine/optim_wrapper.h"
#include "worker/engine/pending_signal.h"
#include "worker/engine/run_context.h"
#include "worker/engine/runner_options.h"

namespace ddp3d::dist {
class DistributedDataParallel;
}

namespace ddp3d::engine {

class BatchLoader;

// This process's CPU generator state as bytes, and back (a checkpoint keeps every rank's).
std::string cpu_rng_state();
void set_cpu_rng_state(const std::string& bytes);

class TrainLoop final : public LoopContext {
 public:
  // `plan`: the one options.train_cfg names (train_loop_registry()). Builds, with validation
  // data, the loop options.val_cfg names and reads the loaders from `options`. `ddp`
  // (may be null: one process), `val_data` and `val_evaluator` (null: no validation) are not owned;
  // everything must outlive the loop.
  TrainLoop(const RunnerOptions& options, std::shared_ptr<const LoopPlan> plan,
            const RunContext& ctx, Model& model, OptimWrapper& optim,
            dist::DistributedDataParallel* ddp, std::shared_ptr<const Dataset> train_data,
            std::shared_ptr<const Dataset> val_data, Evaluator* val_evaluator,
            std::int64_t iters_per_epoch);
  ~TrainLoop() override;
  TrainLoop(const TrainLoop&) = delete;
  TrainLoop& operator=(const TrainLoop&) = delete;

  // Where a resumed run continues: epochs and iterations already completed. When the
  // iterations end inside an epoch (a checkpoint saved on SIGTERM), that epoch continues at the
  // next sample of its order, and `rng_states` (every rank's CPU generator state when it was
  // saved, as the checkpoint holds them; empty: none) gives this rank its RNG back.
  void set_start(std::int64_t epochs_completed, std::int64_t global_iter,
                 const std::vector<std::string>& rng_states = {});
  // The resumed checkpoint's state, handed to the hooks' after_load_checkpoint when run()
  // starts.
  void set_resumed_state(TrainingState state) { resumed_state_ = std::move(state); }
  void add_hook(std::shared_ptr<Hook> hook, HookPriority priority = HookPriority::kNormal);
  // Polled at every iteration boundary; a signal found there goes to the hooks' on_signal.
  void set_pending_signal(PendingSignal* pending) { pending_signal_ = pending; }

  // Trains from the start to max_epochs (max_iters), or until a hook requests a stop.
  void run();

  // LoopContext
  const LoopProgress& progress() const override { return progress_; }
  const RunContext& run_context() const override { return ctx_; }
  void request_stop(const std::string& reason) override;
  std::optional<std::string> stop_reason() const override { return stop_reason_; }
  void save_checkpoint(const std::filesystem::path& path) override;
  void draw_validation(const DrawOptions& draw) override { val_pictures_ = draw; }

 private:
  // An epoch's training data from its first iteration to run: how it is cut, this rank's
  // micro-batches of sample indices per iteration, and the loader that reads them in order.
  struct EpochData {
    TrainDataOrder order;
    std::vector<std::vector<std::vector<std::int64_t>>> micro_batches;
    std::unique_ptr<BatchLoader> loader;
  };

  void run_epoch();
  EpochData open_train_data(std::int64_t first_iter) const;
  void run_iter(const std::vector<std::vector<std::int64_t>>& micro_batches,
                std::vector<Batch> host_batches, std::int64_t iteration_samples);
  void forward(TrainIter& iter, const std::vector<Batch>& host_batches, Batch& device_batch,
               std::int64_t iteration_samples);
  void update(TrainIter& iter);
  void take_pending_signal();
  bool can_validate() const;
  void validate();

  struct Registered {
    std::shared_ptr<Hook> hook;
    HookPriority priority;
  };

  RunnerOptions options_;
  RunContext ctx_;
  Model& model_;
  OptimWrapper& optim_;
  dist::DistributedDataParallel* ddp_;
  std::shared_ptr<const Dataset> train_data_;
  std::shared_ptr<const Dataset> val_data_;
  Evaluator* val_evaluator_;
  std::shared_ptr<const LoopPlan> plan_;      // train_cfg's
  std::shared_ptr<const EvalLoop> val_loop_;  // val_cfg's; null: no validation
  std::vector<Registered> hooks_;             // priority order
  PendingSignal* pending_signal_ = nullptr;
  LoopProgress progress_;
  std::optional<std::string> stop_reason_;
  // A resume inside an epoch: the iterations of it already done, and this rank's RNG state.
  std::int64_t resume_iter_in_epoch_ = 0;
  std::string resume_rng_state_;
  std::optional<TrainingState> resumed_state_;
  std::optional<DrawOptions> val_pictures_;  // draw_validation's
};

}  // namespace ddp3d::engine
