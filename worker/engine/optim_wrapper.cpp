#include "worker/engine/optim_wrapper.h"

#include <ATen/ATen.h>
#include <torch/nn/utils/clip_grad.h>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>

#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "worker/dist/ddp.h"
#include "worker/engine/model.h"

namespace ddp3d::engine {

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const OptimizerSpec& s, Model& model) {
  std::vector<at::Tensor> params = model.parameters();
  if (s.type == "AdamW") {
    return std::make_unique<torch::optim::AdamW>(params, torch::optim::AdamWOptions(s.lr)
                                                             .betas({s.beta1, s.beta2})
                                                             .eps(s.eps)
                                                             .weight_decay(s.weight_decay)
                                                             .amsgrad(s.amsgrad));
  }
  if (s.type == "Adam") {
    return std::make_unique<torch::optim::Adam>(params, torch::optim::AdamOptions(s.lr)
                                                            .betas({s.beta1, s.beta2})
                                                            .eps(s.eps)
                                                            .weight_decay(s.weight_decay)
                                                            .amsgrad(s.amsgrad));
  }
  if (s.type == "SGD") {
    return std::make_unique<torch::optim::SGD>(params, torch::optim::SGDOptions(s.lr)
                                                           .momentum(s.momentum)
                                                           .dampening(s.dampening)
                                                           .weight_decay(s.weight_decay)
                                                           .nesterov(s.nesterov));
  }
  throw std::invalid_argument("optim_wrapper.optimizer.type: unsupported optimizer '" + s.type +
                              "' (AdamW, Adam, SGD)");
}

OptimWrapper::OptimWrapper(Model& model, const OptimWrapperOptions& options)
    : model_(model),
      options_(options),
      optimizer_(make_optimizer(options.optimizer, model)),
      accumulation_(options.accumulative_counts, options.max_iters),
      scaler_(options.loss_scaler),
      lr_(options.optimizer.lr),
      momentum_(base_momentum()) {}

OptimWrapper::~OptimWrapper() = default;

double OptimWrapper::base_momentum() const {
  const OptimizerSpec& s = options_.optimizer;
  return s.type == "SGD" ? s.momentum : s.beta1;
}

void OptimWrapper::set_lr_momentum(double lr, std::optional<double> momentum) {
  const std::string& type = options_.optimizer.type;
  for (auto& group : optimizer_->param_groups()) {
    group.options().set_lr(lr);
    if (!momentum) continue;
    if (type == "SGD") {
      static_cast<torch::optim::SGDOptions&>(group.options()).momentum(*momentum);
    } else if (type == "AdamW") {
      auto& o = static_cast<torch::optim::AdamWOptions&>(group.options());
      o.betas({*momentum, std::get<1>(o.betas())});
    } else if (type == "Adam") {
      auto& o = static_cast<torch::optim::AdamOptions&>(group.options());
      o.betas({*momentum, std::get<1>(o.betas())});
    }
  }
  lr_ = lr;
  momentum_ = momentum.value_or(base_momentum());
}

UpdateResult OptimWrapper::update_params(const at::Tensor& loss, std::int64_t iter,
                                         bool last_micro) {
  UpdateResult result;
  result.update_iter = last_micro && accumulation_.is_update_iter(iter);
  at::Tensor scaled = loss / accumulation_.loss_divisor(iter);
  if (options_.precision == Precision::kFp16) scaled = scaled * scaler_.scale();
  backward(scaled, result.update_iter, result);
  if (result.update_iter) step(result);
  result.loss_scale = loss_scale();
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
  bool apply = true;
  if (options_.precision == Precision::kFp16) {
    std::vector<at::Tensor> grads;
    for (const at::Tensor& p : model_.parameters()) grads.push_back(p.grad());
    // Gradients are already averaged, so every rank reaches the same verdict.
    apply = scaler_.update(scaler_.unscale_and_check(grads));
    result.nonfinite_grads = !apply;
  }
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

double OptimWrapper::loss_scale() const {
  return options_.precision == Precision::kFp16 ? scaler_.scale() : 0.0;
}

}  // namespace ddp3d::engine
