#include "worker/engine/param_scheduler_schemas.h"

#include <string>
#include <utility>

#include "worker/config/common_schemas.h"
#include "worker/config/schema.h"

namespace ddp3d::engine {
namespace {

using S = config::Schema;

}  // namespace

std::vector<config::Field> param_scheduler_fields(std::vector<config::Field> own) {
  std::vector<config::Field> fields = {
      {"by_epoch", S::boolean().def(true).doc("begin/end/T_max count epochs (else iterations)")},
      {"begin", S::number().min(0).def(0).doc("first epoch/iteration it acts on")},
      {"end",
       S::number().min(0).doc("first epoch/iteration it no longer acts on (unset: the end)")},
      {"convert_to_iter_based",
       S::boolean().def(false).doc("step every iteration while counting epochs")},
  };
  for (config::Field& f : own) fields.push_back(std::move(f));
  return fields;
}

void register_param_scheduler_schemas(config::ComponentSchemas& schemas) {
  const S gamma = S::number().min(0).def(0.1).doc("multiplier at each step");
  const S t_max = S::number().min(0, true).required().doc("length of the cosine half-period");
  for (const char* param : {"LR", "Momentum"}) {
    const std::string p = param;
    const char* final_value = p == "LR" ? "final lr" : "final momentum (AdamW: beta1)";
    schemas.add(
        "param_scheduler", "Step" + p,
        param_scheduler_fields(
            {{"step_size", S::integer().min(1).required().doc("steps between multiplications")},
             {"gamma", gamma}}));
    schemas.add("param_scheduler", "MultiStep" + p,
                param_scheduler_fields({{"milestones", config::schemas::int_list().required().doc(
                                                           "steps after begin that multiply")},
                                        {"gamma", gamma}}));
    schemas.add("param_scheduler", "Linear" + p,
                param_scheduler_fields(
                    {{"start_factor", S::number().min(0).def(1.0 / 3).doc("factor at begin")},
                     {"end_factor", S::number().min(0).def(1.0).doc("factor at end")}}));
    schemas.add("param_scheduler", "Constant" + p,
                param_scheduler_fields(
                    {{"factor", S::number().min(0).def(1.0 / 3).doc("factor until end")}}));
    schemas.add("param_scheduler", "CosineAnnealing" + p,
                param_scheduler_fields(
                    {{"T_max", t_max}, {"eta_min", S::number().min(0).def(0.0).doc(final_value)}}));
  }
}

}  // namespace ddp3d::engine
