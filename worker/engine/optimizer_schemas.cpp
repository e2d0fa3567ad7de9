#include "worker/engine/optimizer_schemas.h"

#include <utility>

#include "worker/config/common_schemas.h"
#include "worker/config/schema.h"

namespace ddp3d::engine {

using S = config::Schema;

std::vector<config::Field> optimizer_fields(std::vector<config::Field> own) {
  std::vector<config::Field> fields = {
      {"lr", S::number().min(0, true).required().doc("learning rate")},
      {"weight_decay", S::number().min(0).def(0.0)},
  };
  for (config::Field& f : own) fields.push_back(std::move(f));
  return fields;
}

void register_optimizer_schemas(config::ComponentSchemas& schemas) {
  const auto adam = [] {
    return optimizer_fields({{"betas", config::schemas::vec(2)
                                           .def_list({0.9, 0.999})
                                           .doc("beta1 is what momentum schedules move")},
                             {"eps", S::number().min(0, true).def(1e-8)},
                             {"amsgrad", S::boolean().def(false)}});
  };
  schemas.add("optimizer", "AdamW", adam());
  schemas.add("optimizer", "Adam", adam());
  schemas.add("optimizer", "SGD",
              optimizer_fields({{"momentum", S::number().min(0).def(0.0)},
                                {"dampening", S::number().min(0).def(0.0)},
                                {"nesterov", S::boolean().def(false)}}));
}

}  // namespace ddp3d::engine
