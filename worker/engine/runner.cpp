#include "worker/engine/runner.h"

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "worker/dist/ddp.h"
#include "worker/dist/process_group.h"
#include "worker/engine/checkpoint.h"
#include "worker/engine/checkpoint_file.h"
#include "worker/engine/collective_resume.h"
#include "worker/engine/data_order.h"
#include "worker/engine/hook_registry.h"
#include "worker/engine/hooks/preemption_hook.h"
#include "worker/engine/hooks/run_summary_hook.h"
#include "worker/engine/hooks/sample_trace_hook.h"
#include "worker/engine/hooks/telemetry_hook.h"
#include "worker/engine/optim_wrapper_registry.h"
#include "worker/engine/param_schedule.h"
#include "worker/engine/train_loop.h"
#include "worker/engine/train_loop_registry.h"

namespace ddp3d::engine {

Runner::Runner(RunnerOptions options, RunContext ctx, std::shared_ptr<Model> model,
               std::shared_ptr<const Dataset> train_data, std::shared_ptr<const Dataset> val_data,
               std::shared_ptr<Evaluator> val_evaluator, TrainLog& log)
    : options_(std::move(options)),
      ctx_(ctx),
      model_(std::move(model)),
      train_data_(std::move(train_data)),
      val_data_(std::move(val_data)),
      val_evaluator_(std::move(val_evaluator)),
      log_(log) {
  model_->to(ctx_.device);
  iters_per_epoch_ = train_iters_per_epoch(
      train_data_->size(), ctx_, options_.train_loader.batch_size, options_.train_loader.drop_last);
  plan_ = train_loop_registry().build(options_.train_cfg);
  const std::int64_t max_iters = planned_progress(*plan_, iters_per_epoch_).max_iters();
  optim_ = optim_wrapper_registry().build(
      options_.optim_wrapper,
      OptimWrapperBuildContext{.model = *model_, .max_iters = max_iters, .device = ctx_.device});
  schedule_ = std::make_unique<ParamSchedule>(options_.schedule, iters_per_epoch_);
}

Runner::~Runner() = default;

void Runner::resume() {
  if (options_.resume.empty()) return;
  std::vector<std::string> warnings;
  const std::optional<ResumeSource> source = fetch_resume_checkpoint(
      ctx_.pg, ctx_.rank, options_.resume, options_.work_dir, iters_per_epoch_, &warnings);
  for (const std::string& w : warnings) log_.warning(w);
  if (!source) {
    log_.info("resume auto: no valid checkpoint in " + options_.work_dir.string() +
              ", starting from scratch");
    return;
  }
  TrainingState state;
  std::string fingerprint;
  try {
    deserialize_checkpoint(source->payload, source->path.string(), *model_, &optim_->optimizer(),
                           &state);
    fingerprint = state_fingerprint(*model_, optim_->optimizer(), state);
  } catch (const std::exception& e) {
    fingerprint = std::string("error: ") + e.what();
  }
  // Every rank loaded the same bytes; this proves it loaded them into the same state, or
  // stops every rank with one message.
  verify_same_state(ctx_.pg, fingerprint, source->path.string());
  if (static_cast<std::uint64_t>(state.seed) != ctx_.seed) {
    log_.warning("the checkpoint was trained with seed " + std::to_string(state.seed) +
                 "; continuing with it (not " + std::to_string(ctx_.seed) + ")");
    ctx_.seed = static_cast<std::uint64_t>(state.seed);
  }
  optim_->load_loss_scale_state(
      {.scale = state.loss_scale, .growth_tracker = state.scale_growth_tracker});
  start_epoch_ = state.epoch;
  start_iter_ = state.iter;
  start_rng_states_ = state.rank_rng_states;
  resumed_state_ = state;
  // The data order is defined by the global batch (data_order.h): with the same one, the
  // checkpoint's position is exact at any world size.
  const std::int64_t batch_size = options_.train_loader.batch_size;
  const std::int64_t bws = batch_world_size(ctx_);
  const std::int64_t saved_bws =
      state.batch_world_size > 0 ? state.batch_world_size : state.world_size;
  const std::int64_t saved_batch = state.batch_size > 0 ? state.batch_size : batch_size;
  if (saved_bws != bws || saved_batch != batch_size) {
    log_.warning("the checkpoint was written with a global batch of " +
                 std::to_string(saved_bws * saved_batch) + " (" + std::to_string(saved_bws) +
                 " ranks × batch_size " + std::to_string(saved_batch) + "), resuming with " +
                 std::to_string(bws * batch_size) + " (" + std::to_string(bws) + " × " +
                 std::to_string(batch_size) + "): the data order differs from the original run");
  } else if (state.world_size != ctx_.world_size) {
    const std::int64_t done_in_epoch = state.iter - state.epoch * iters_per_epoch_;
    log_.info("resuming " +
              (done_in_epoch > 0 ? "iter " + std::to_string(state.iter)
                                 : "epoch " + std::to_string(state.epoch)) +
              " written at world size " + std::to_string(state.world_size) + " at world size " +
              std::to_string(ctx_.world_size) + ": global batch " +
              std::to_string(bws * batch_size) + " kept" +
              (ctx_.world_size < bws
                   ? ", " + std::to_string(ctx_.world_size) + " ranks accumulate micro-batches"
                   : std::string()));
  }
  const std::int64_t in_epoch = state.iter - state.epoch * iters_per_epoch_;
  log_.info("resumed from " + source->path.string() + " at epoch " + std::to_string(state.epoch) +
            ", iteration " + std::to_string(state.iter) +
            (in_epoch > 0 ? " (" + std::to_string(in_epoch) + " iterations into epoch " +
                                std::to_string(state.epoch + 1) + ")"
                          : std::string()) +
            "; the same state on all " + std::to_string(ctx_.world_size) + " ranks (digest " +
            fingerprint + ")");
}

TrainOutcome Runner::train() {
  resume();
  log_.training_starts_at(start_iter_ + 1);
  // DDP after the checkpoint is loaded: loading replaces the parameters' storage (Tensor::set_),
  // and DDP's gradient hooks must be attached to the parameters as they will be trained.
  if (ctx_.pg != nullptr) {
    // Checks shapes across ranks and starts every rank from rank 0's weights.
    dist::DdpOptions ddp;
    ddp.bucket_cap_mb = options_.bucket_cap_mb;
    ddp.first_bucket_cap_mb = options_.first_bucket_cap_mb;
    ddp.find_unused_parameters = options_.find_unused_parameters;
    ddp.broadcast_buffers = options_.broadcast_buffers;
    ddp_ = std::make_unique<dist::DistributedDataParallel>(model_, *ctx_.pg, ddp);
  }
  optim_->set_ddp(ddp_.get());

  TrainLoop loop(options_, plan_, ctx_, *model_, *optim_, ddp_.get(), train_data_, val_data_,
                 val_evaluator_.get(), iters_per_epoch_);
  loop.set_start(start_epoch_, start_iter_, start_rng_states_);
  if (resumed_state_) loop.set_resumed_state(*resumed_state_);
  const HookBuildContext hook_ctx{.log = log_,
                                  .run = ctx_,
                                  .model = *model_,
                                  .work_dir = options_.work_dir,
                                  .optim = optim_.get(),
                                  .schedule = schedule_.get(),
                                  .val_evaluator = val_evaluator_,
                                  .resumed = resumed_state_.has_value()};
  const auto add = [&](const config::Config& cfg) {
    BuiltHook built = hook_registry().build(cfg, hook_ctx);
    if (built.hook) loop.add_hook(std::move(built.hook), built.priority);
  };
  // mmengine's default_hooks, each at its type's priority unless the config names one.
  const config::Config default_hooks =
      options_.default_hooks ? *options_.default_hooks : default_hooks_config();
  for (const std::string& key : default_hook_keys()) {
    if (default_hooks.has(key)) add(default_hooks.node(key));
  }
  // The runner's own: metrics, preemption, sample traces.
  if (telemetry_ != nullptr)
    loop.add_hook(std::make_shared<TelemetryHook>(*telemetry_), HookPriority::kLow);
  preemption_ = std::make_shared<PreemptionHook>(options_.work_dir,
                                                 optim_->options().accumulative_counts, log_);
  loop.add_hook(preemption_, HookPriority::kVeryHigh);
  if (const char* trace = std::getenv("DDP3D_SAMPLE_TRACE"); trace != nullptr && *trace != '\0')
    loop.add_hook(std::make_shared<SampleTraceHook>(trace, ctx_.rank), HookPriority::kLow);
  for (const config::Config& cfg : options_.custom_hooks) add(cfg);
  for (const auto& [hook, priority] : custom_hooks_) loop.add_hook(hook, priority);
  // Last at every point: its after_train sees the final checkpoint written.
  loop.add_hook(std::make_shared<RunSummaryHook>(log_, val_evaluator_.get(),
                                                 options_.work_dir / "train_summary.json"),
                HookPriority::kLowest);
  loop.set_pending_signal(pending_signal_);
  loop.run();
  return preemption_->stopped_by() != 0 ? TrainOutcome::kPreempted : TrainOutcome::kFinished;
}

}  // namespace ddp3d::engine
