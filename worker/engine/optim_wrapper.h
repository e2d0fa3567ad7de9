// The optimizer wrapper (mmengine's OptimWrapper): everything between a loss and a parameter
// update. It owns the optimizer and gradient accumulation; per iteration it runs backward
// (under DDP's no_sync inside an accumulation group, synchronised on the group's last
// iteration), and on that last iteration clips, steps and zeroes the gradients. Subclasses
// change the precision: AmpOptimWrapper (amp_optim_wrapper.h) runs the forward pass under
// autocast and scales the fp16 loss. optim_wrapper_registry() builds one from config.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/DeviceType.h>

#include <cstdint>
#include <memory>
#include <optional>

#include "worker/engine/autocast_scope.h"
#include "worker/engine/grad_accumulation.h"
#include "worker/engine/runner_options.h"

namespace torch::optim {
class Optimizer;
}

namespace ddp3d::dist {
class DistributedDataParallel;
}

namespace ddp3d::engine {

class Model;

// The registered optimizer of spec.type (optimizer_registry(): AdamW, Adam, SGD, ...) over the
// model's parameters. Throws std::invalid_argument naming optim_wrapper.optimizer.type for a
// type nobody registered.
std::unique_ptr<torch::optim::Optimizer> make_optimizer(const OptimizerSpec& spec, Model& model);

// The keys every optimizer wrapper has.
struct OptimWrapperOptions {
  OptimizerSpec optimizer;
  std::int64_t accumulative_counts = 1;
  std::int64_t max_iters = 1;           // iterations of the whole training
  std::optional<double> clip_max_norm;  // null: no clipping
  double clip_norm_type = 2.0;
};

// What one call of update_params did.
struct UpdateResult {
  // The iteration ended an accumulation group: gradients were synchronised, the step applied
  // (or skipped, see below) and the gradients zeroed.
  bool update_iter = false;
  bool stepped = false;  // optimizer.step() ran
  // fp16: the gradients held inf/NaN, so the step was skipped and the loss scale backed off.
  bool nonfinite_grads = false;
  double loss_scale = 0;  // fp16: the scale after this update; 0 otherwise
  // DDP: time this iteration blocked on gradient all-reduces after its backward finished; null
  // when it did not synchronise (one process, or inside an accumulation group).
  std::optional<double> allreduce_wait_s;
};

// The loss scaler's state, for checkpoints: scale 0 when the wrapper scales no loss.
struct LossScaleState {
  double scale = 0;
  std::int64_t growth_tracker = 0;
};

class OptimWrapper {
 public:
  // The model must outlive the wrapper. Throws std::invalid_argument for a bad optimizer type
  // or accumulative_counts < 1.
  OptimWrapper(Model& model, const OptimWrapperOptions& options);
  virtual ~OptimWrapper();
  OptimWrapper(const OptimWrapper&) = delete;
  OptimWrapper& operator=(const OptimWrapper&) = delete;

  // Gradient synchronisation through `ddp` (not owned); null: one process.
  void set_ddp(dist::DistributedDataParallel* ddp) { ddp_ = ddp; }

  torch::optim::Optimizer& optimizer() { return *optimizer_; }
  const OptimWrapperOptions& options() const { return options_; }

  // Run the forward pass inside this (mmengine's optim_context): nothing here, autocast in
  // AmpOptimWrapper.
  virtual AutocastScope autocast(c10::DeviceType device) const {
    return AutocastScope(Precision::kFp32, device);
  }

  // The configured lr and momentum (SGD momentum / Adam(W) beta1), the schedules' base.
  double base_lr() const { return options_.optimizer.lr; }
  double base_momentum() const;
  // Sets every param group's lr, and its momentum when given (unscheduled momentum stays as
  // configured).
  void set_lr_momentum(double lr, std::optional<double> momentum);
  double lr() const { return lr_; }
  double momentum() const { return momentum_; }

  // True when global iteration `iter` (0-based) ends an accumulation group.
  bool is_update_iter(std::int64_t iter) const { return accumulation_.is_update_iter(iter); }
  // Backward of `loss` (the iteration's total loss, undivided and unscaled) for global
  // iteration `iter`, then, when it ends an accumulation group, the parameter update.
  // An iteration trained in micro-batches calls it once per micro-batch with that one's
  // (weighted) loss: `last_micro` false keeps the gradients local (DDP no_sync) and never
  // steps; the last micro-batch synchronises and steps as the whole iteration would.
  UpdateResult update_params(const at::Tensor& loss, std::int64_t iter, bool last_micro = true);
  // Drops the gradients accumulated so far (an iteration skipped before its backward).
  void discard_gradients();

  // The loss scaler's state (checkpoints save and restore it); scale 0 without one.
  virtual LossScaleState loss_scale_state() const { return {}; }
  virtual void load_loss_scale_state(const LossScaleState& /*state*/) {}

 protected:
  // The loss backward runs on (the accumulation-divided one); AmpOptimWrapper scales it.
  virtual at::Tensor scale_loss(const at::Tensor& loss) { return loss; }
  // Called once the gradients are synchronised, before clipping; returns whether the step may
  // be applied (AmpOptimWrapper unscales them and skips a step on inf/NaN).
  virtual bool prepare_step(UpdateResult& /*result*/) { return true; }
  Model& model() { return model_; }

 private:
  void backward(const at::Tensor& loss, bool sync, UpdateResult& result);
  void step(UpdateResult& result);

  Model& model_;
  OptimWrapperOptions options_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  GradAccumulation accumulation_;
  dist::DistributedDataParallel* ddp_ = nullptr;
  double lr_;
  double momentum_;
};

}  // namespace ddp3d::engine
