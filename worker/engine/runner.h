// The runner (mmengine's Runner): builds what training needs from the options — the optimizer
// wrapper (optim_wrapper.h), DDP, the train loop (train_loop.h) and its standard hooks
// (hooks/: timer, lr/momentum schedule, logger, telemetry, checkpoints) — resumes when asked,
// and runs the loop.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "worker/engine/checkpoint.h"
#include "worker/engine/dataset.h"
#include "worker/engine/evaluator.h"
#include "worker/engine/hook.h"
#include "worker/engine/model.h"
#include "worker/engine/pending_signal.h"
#include "worker/engine/run_context.h"
#include "worker/engine/runner_options.h"
#include "worker/engine/train_log.h"
#include "worker/engine/train_telemetry.h"

namespace ddp3d::dist {
class DistributedDataParallel;
}  // namespace ddp3d::dist

namespace ddp3d::engine {

class LoopPlan;
class OptimWrapper;
class ParamSchedule;

class PreemptionHook;

enum class TrainOutcome { kFinished, kPreempted };

class Runner {
 public:
  Runner(RunnerOptions options, RunContext ctx, std::shared_ptr<Model> model,
         std::shared_ptr<const Dataset> train_data, std::shared_ptr<const Dataset> val_data,
         std::shared_ptr<Evaluator> val_evaluator, TrainLog& log);
  ~Runner();

  // Resumes when options.resume says so, then trains to max_epochs (max_iters), or until a SIGTERM
  // noted in the pending signal (set_pending_signal) stops every rank at one iteration with a
  // checkpoint (kPreempted).
  TrainOutcome train();
  // Where the process's signal handler notes SIGTERM/SIGINT (not owned; may be null).
  void set_pending_signal(PendingSignal* pending) { pending_signal_ = pending; }

  std::int64_t start_epoch() const { return start_epoch_; }

  // Optional observer of every iteration (not owned; must outlive train()).
  void set_telemetry(TrainTelemetry* telemetry) { telemetry_ = telemetry; }
  // A hook besides the standard ones (mmengine's custom_hooks), registered after them at the
  // same priority.
  void add_hook(std::shared_ptr<Hook> hook, HookPriority priority = HookPriority::kNormal) {
    custom_hooks_.emplace_back(std::move(hook), priority);
  }

 private:
  void resume();

  RunnerOptions options_;
  RunContext ctx_;
  std::shared_ptr<Model> model_;
  std::shared_ptr<const Dataset> train_data_;
  std::shared_ptr<const Dataset> val_data_;
  std::shared_ptr<Evaluator> val_evaluator_;
  TrainLog& log_;
  TrainTelemetry* telemetry_ = nullptr;
  std::vector<std::pair<std::shared_ptr<Hook>, HookPriority>> custom_hooks_;

  std::unique_ptr<dist::DistributedDataParallel> ddp_;  // null: one process
  std::shared_ptr<const LoopPlan> plan_;                // train_cfg's, built once
  std::shared_ptr<OptimWrapper> optim_;
  std::unique_ptr<ParamSchedule> schedule_;
  std::int64_t iters_per_epoch_ = 0;
  std::int64_t start_epoch_ = 0;
  std::int64_t start_iter_ = 0;  // iterations completed before this run
  std::vector<std::string> start_rng_states_;
  std::optional<TrainingState> resumed_state_;  // what the resumed checkpoint held
  PendingSignal* pending_signal_ = nullptr;
  std::shared_ptr<PreemptionHook> preemption_;
};

}  // namespace ddp3d::engine
