#include "worker/engine/train_loop_registry.h"

#include <memory>
#include <stdexcept>
#include <string>

#include "worker/engine/train_loop_plans.h"

namespace ddp3d::engine {
namespace {

config::Registry<LoopPlan> make_builtin_registry() {
  config::Registry<LoopPlan> r("train_loop");
  r.add("EpochBasedTrainLoop", [](const config::Config& node) {
    return std::make_shared<EpochBasedTrainLoop>(node.get<std::int64_t>("max_epochs"),
                                                 validation_rule(node));
  });
  r.add("IterBasedTrainLoop", [](const config::Config& node) {
    return std::make_shared<IterBasedTrainLoop>(node.get<std::int64_t>("max_iters"),
                                                validation_rule(node));
  });
  return r;
}

}  // namespace

config::Registry<LoopPlan>& train_loop_registry() {
  static config::Registry<LoopPlan> registry = make_builtin_registry();
  return registry;
}

ValidationRule validation_rule(const config::Config& node) {
  return ValidationRule{.interval = node.get<std::int64_t>("val_interval"),
                        .begin = node.get<std::int64_t>("val_begin")};
}

LoopProgress planned_progress(const LoopPlan& plan, std::int64_t iters_per_epoch) {
  if (iters_per_epoch < 1)
    throw std::invalid_argument("a training loop needs iters_per_epoch >= 1, got " +
                                std::to_string(iters_per_epoch));
  LoopProgress progress;
  progress.iters_per_epoch = iters_per_epoch;
  plan.set_limits(progress);
  return progress;
}

config::Config train_loop_config(std::string_view yaml) {
  return config::parse_section("train_cfg", yaml, "<train_cfg>");
}

}  // namespace ddp3d::engine
