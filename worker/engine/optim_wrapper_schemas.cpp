#include "worker/engine/optim_wrapper_schemas.h"

#include <utility>

#include "worker/config/schema.h"

namespace ddp3d::engine {

using S = config::Schema;

std::vector<config::Field> optim_wrapper_fields(std::vector<config::Field> own) {
  std::vector<config::Field> fields = {
      {"optimizer", S::component("optimizer")
                        .required()
                        .doc("a registered optimizer (worker/engine's optimizer_schemas.cpp: "
                             "AdamW, Adam, SGD)")},
      {"clip_grad", S::map({{"max_norm", S::number().min(0, true).required()},
                            {"norm_type", S::number().min(0, true).def(2.0)}})
                        .def_null()
                        .doc("clip the global gradient norm; null: no clipping")},
      {"accumulative_counts",
       S::integer().min(1).def(1).doc("steps whose gradients are summed per update")},
  };
  for (config::Field& f : own) fields.push_back(std::move(f));
  return fields;
}

void register_optim_wrapper_schemas(config::ComponentSchemas& schemas) {
  schemas.add("optim_wrapper", "OptimWrapper", optim_wrapper_fields({}));
  schemas.add("optim_wrapper", "AmpOptimWrapper",
              optim_wrapper_fields(
                  {{"dtype", S::string()
                                 .one_of({"float16", "bfloat16"})
                                 .def("float16")
                                 .doc("autocast's dtype; float16 scales the loss and needs CUDA")},
                   {"init_scale",
                    S::number().min(0, true).def(65536.0).doc("fp16 dynamic loss scale start")}}));
}

}  // namespace ddp3d::engine
