// optim_wrapper.optimizer types (mmengine's names): how each is read from its config mapping,
// built over the model's parameters, and moved by a momentum schedule. Built in: AdamW, Adam,
// SGD. A new optimizer is its keys (component kind "optimizer", with lr and weight_decay) and
// one add(); its own keys beyond OptimizerSpec's it reads from OptimizerSpec::node.
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "worker/config/config.h"
#include "worker/engine/runner_options.h"

namespace torch::optim {
class Optimizer;
class OptimizerOptions;
}  // namespace torch::optim

namespace ddp3d::engine {

struct OptimizerType {
  // Fills the spec's type-specific fields from the validated optimizer mapping (lr,
  // weight_decay and node are set already).
  std::function<void(const config::Config& node, OptimizerSpec& spec)> read;
  std::function<std::unique_ptr<torch::optim::Optimizer>(std::vector<at::Tensor> params,
                                                         const OptimizerSpec& spec)>
      make;
  // The momentum a momentum schedule starts from and moves (SGD's momentum, Adam's beta1);
  // null: the type has none and momentum schedules leave it alone.
  std::function<double(const OptimizerSpec& spec)> base_momentum;
  std::function<void(torch::optim::OptimizerOptions& group, double momentum)> set_momentum;
};

class OptimizerRegistry {
 public:
  // Throws std::logic_error when `type` is registered already.
  void add(const std::string& type, OptimizerType entry);
  // Throws std::invalid_argument naming optim_wrapper.optimizer.type and the known types.
  const OptimizerType& at(const std::string& type) const;

 private:
  std::map<std::string, OptimizerType> types_;
};

OptimizerRegistry& optimizer_registry();

// The spec of a validated optim_wrapper.optimizer mapping.
OptimizerSpec optimizer_spec(const config::Config& node);

}  // namespace ddp3d::engine
