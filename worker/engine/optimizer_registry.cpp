#include "worker/engine/optimizer_registry.h"

#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>

#include <stdexcept>
#include <tuple>
#include <utility>

namespace ddp3d::engine {
namespace {

void read_adam(const config::Config& node, OptimizerSpec& s) {
  const auto betas = node.get<std::vector<double>>("betas");
  s.beta1 = betas.at(0);
  s.beta2 = betas.at(1);
  s.eps = node.get<double>("eps");
  s.amsgrad = node.get<bool>("amsgrad");
}

// Adam and AdamW: the same keys; beta1 is the momentum a schedule moves.
template <typename Optimizer, typename Options>
OptimizerType adam_type() {
  OptimizerType t;
  t.read = read_adam;
  t.make = [](std::vector<at::Tensor> params, const OptimizerSpec& s) {
    return std::unique_ptr<torch::optim::Optimizer>(
        std::make_unique<Optimizer>(std::move(params), Options(s.lr)
                                                           .betas({s.beta1, s.beta2})
                                                           .eps(s.eps)
                                                           .weight_decay(s.weight_decay)
                                                           .amsgrad(s.amsgrad)));
  };
  t.base_momentum = [](const OptimizerSpec& s) { return s.beta1; };
  t.set_momentum = [](torch::optim::OptimizerOptions& group, double momentum) {
    auto& o = static_cast<Options&>(group);
    o.betas({momentum, std::get<1>(o.betas())});
  };
  return t;
}

OptimizerRegistry make_builtin_registry() {
  OptimizerRegistry r;
  r.add("AdamW", adam_type<torch::optim::AdamW, torch::optim::AdamWOptions>());
  r.add("Adam", adam_type<torch::optim::Adam, torch::optim::AdamOptions>());
  r.add("SGD",
        {[](const config::Config& node, OptimizerSpec& s) {
           s.momentum = node.get<double>("momentum");
           s.dampening = node.get<double>("dampening");
           s.nesterov = node.get<bool>("nesterov");
         },
         [](std::vector<at::Tensor> params, const OptimizerSpec& s) {
           return std::unique_ptr<torch::optim::Optimizer>(std::make_unique<torch::optim::SGD>(
               std::move(params), torch::optim::SGDOptions(s.lr)
                                      .momentum(s.momentum)
                                      .dampening(s.dampening)
                                      .weight_decay(s.weight_decay)
                                      .nesterov(s.nesterov)));
         },
         [](const OptimizerSpec& s) { return s.momentum; },
         [](torch::optim::OptimizerOptions& group, double momentum) {
           static_cast<torch::optim::SGDOptions&>(group).momentum(momentum);
         }});
  return r;
}

}  // namespace

void OptimizerRegistry::add(const std::string& type, OptimizerType entry) {
  if (!types_.emplace(type, std::move(entry)).second) {
    throw std::logic_error("optimizer type '" + type + "' is registered twice");
  }
}

const OptimizerType& OptimizerRegistry::at(const std::string& type) const {
  const auto it = types_.find(type);
  if (it == types_.end()) {
    std::string known;
    for (const auto& entry : types_) known += (known.empty() ? "" : ", ") + entry.first;
    throw std::invalid_argument("optim_wrapper.optimizer.type: unsupported optimizer '" + type +
                                "' (" + known + ")");
  }
  return it->second;
}

OptimizerRegistry& optimizer_registry() {
  static OptimizerRegistry registry = make_builtin_registry();
  return registry;
}

OptimizerSpec optimizer_spec(const config::Config& node) {
  OptimizerSpec s;
  s.type = node.get<std::string>("type");
  s.lr = node.get<double>("lr");
  s.weight_decay = node.get<double>("weight_decay");
  s.node = node;
  optimizer_registry().at(s.type).read(node, s);
  return s;
}

}  // namespace ddp3d::engine
