#include "worker/engine/optim_wrapper.h"

#include <ATen/ATen.h>
#include <torch/nn/utils/clip_grad.h>
#include <torch/optim/optimizer.h>

#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "worker/dist/ddp.h"
#include "worker/engine/model.h"
#include "worker/engine/optimizer_registry.h"

namespace ddp3d::engine {

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const OptimizerSpec& s, Model& model) {
  return optimizer_registry().at(s.type).make(model.parameters(), s);
}

OptimWrapper::OptimWrapper(Model& model, const OptimWrapperOptions& options)
    : model_(model),
      options_(options),
      optimizer_(make_optimizer(options.optimizer, model)),
      accumulation_(options.accumulative_counts, options.max_iters),
      lr_(options.optimizer.lr),
      momentum_(base_momentum()) {}

OptimWrapper::~OptimWrapper() = default;

double OptimWrapper::base_momentum() const {
  const OptimizerType& type = optimizer_registry().at(options_.optimizer.type);
  return type.base_momentum ? type.base_momentum(options_.optimizer) : 0.0;
}

void OptimWrapper::set_lr_momentum(double lr, std::optional<double> momentum) {
  const OptimizerType& type = optimizer_registry().at(options_.optimizer.type);
  for (auto& group : optimizer_->param_groups()) {
    group.options().set_lr(lr);
    if (momentum && type.set_momentum) type.set_momentum(group.options(), *momentum);
  }
  lr_ = lr;
  momentum_ = momentum.value_or(base_momentum());
}

UpdateResult OptimWrapper::update_params(const at::Tensor& loss, std::int64_t iter,
                                         bool last_micro) {
  UpdateResult result;
  result.update_iter = last_micro && accumulation_.is_update_iter(iter);
  backward(scale_loss(loss / accumulation_.loss_divisor(iter)), result.update_iter, result);
  if (result.update_iter) step(result);
  result.loss_scale = loss_scale_state().scale;
  return result;
}

void OptimWrapper::backward(const at::Tensor& loss, bool sync, UpdateResult& result) {
  if (ddp_ == nullptr) {
    loss.backward();
  } else if (!sync) {
    // Accumulation: gradients stay local until the group's last iteration.
    auto no_sync = ddp_->no_sync();
    ddp_->prepare_backward({loss});
    loss.backward();
  } else {
    ddp_->prepare_backward({loss});
    loss.backward();
    // Averaged gradients in place (no-op if backward did it); the stats say how long the
    // step blocked on all-reduces that backward could not hide.
    result.allreduce_wait_s = ddp_->finalize_backward().allreduce_wait_s;
  }
}

void OptimWrapper::step(UpdateResult& result) {
  const bool apply = prepare_step(result);
  if (apply && options_.clip_max_norm) {
    torch::nn::utils::clip_grad_norm_(model_.parameters(), *options_.clip_max_norm,
                                      options_.clip_norm_type);
  }
  if (apply) optimizer_->step();
  result.stepped = apply;
  optimizer_->zero_grad();
}

void OptimWrapper::discard_gradients() {
  optimizer_->zero_grad();
}

}  // namespace ddp3d::engine
