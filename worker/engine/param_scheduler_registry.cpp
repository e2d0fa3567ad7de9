#include "worker/engine/param_scheduler_registry.h"

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "worker/engine/schedule_rules.h"

namespace ddp3d::engine {

std::shared_ptr<SchedulePhase> schedule_phase(const config::Config& node, ScheduledParam param,
                                              std::shared_ptr<const ScheduleRule> rule) {
  auto phase = std::make_shared<SchedulePhase>();
  phase->rule = std::move(rule);
  phase->param = param;
  phase->by_epoch = node.get<bool>("by_epoch");
  phase->convert_to_iter_based = node.get<bool>("convert_to_iter_based");
  phase->begin = node.get<double>("begin");
  if (node.has("end")) phase->end = node.get<double>("end");
  return phase;
}

config::Registry<SchedulePhase>& param_scheduler_registry() {
  static config::Registry<SchedulePhase> registry = [] {
    config::Registry<SchedulePhase> r("param_scheduler");
    using Rule = std::function<std::shared_ptr<const ScheduleRule>(const config::Config&)>;
    const std::vector<std::pair<std::string, Rule>> rules = {
        {"Step",
         [](const config::Config& n) {
           return std::make_shared<StepRule>(n.get<double>("step_size"), n.get<double>("gamma"));
         }},
        {"MultiStep",
         [](const config::Config& n) {
           return std::make_shared<MultiStepRule>(n.get<std::vector<double>>("milestones"),
                                                  n.get<double>("gamma"));
         }},
        {"Linear",
         [](const config::Config& n) {
           return std::make_shared<LinearRule>(n.get<double>("start_factor"),
                                               n.get<double>("end_factor"));
         }},
        {"Constant",
         [](const config::Config& n) {
           return std::make_shared<ConstantRule>(n.get<double>("factor"));
         }},
        {"CosineAnnealing",
         [](const config::Config& n) {
           return std::make_shared<CosineAnnealingRule>(n.get<double>("T_max"),
                                                        n.get<double>("eta_min"));
         }},
    };
    for (const auto& entry : rules) {
      for (const ScheduledParam param : {ScheduledParam::kLr, ScheduledParam::kMomentum}) {
        const std::string type = entry.first + (param == ScheduledParam::kLr ? "LR" : "Momentum");
        r.add(type, [param, rule = entry.second](const config::Config& node) {
          return schedule_phase(node, param, rule(node));
        });
      }
    }
    return r;
  }();
  return registry;
}

}  // namespace ddp3d::engine
