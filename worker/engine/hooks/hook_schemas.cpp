#include "worker/engine/hooks/hook_schemas.h"

#include <utility>
#include <vector>

#include "worker/config/schema.h"

namespace ddp3d::engine {
namespace {

using S = config::Schema;

// Every custom hook takes `priority` (mmengine's names; null: the hook's own default).
std::vector<config::Field> with_priority(std::vector<config::Field> fields) {
  fields.emplace_back("priority",
                      S::string()
                          .one_of({"HIGHEST", "VERY_HIGH", "HIGH", "ABOVE_NORMAL", "NORMAL",
                                   "BELOW_NORMAL", "LOW", "VERY_LOW", "LOWEST"})
                          .def_null()
                          .doc("where it runs among the hooks at each point; null: its default"));
  return fields;
}

}  // namespace

void register_hook_schemas(config::ComponentSchemas& schemas) {
  schemas.add("hook", "EMAHook",
              with_priority({
                  {"momentum", S::number().min(0, true).max(1).def(0.0002).doc(
                                   "ema = (1 - momentum) * ema + momentum * param")},
                  {"interval", S::integer().min(1).def(1).doc("update every N optimizer steps")},
                  {"begin_iter",
                   S::integer().min(0).def(0).doc("first iteration that updates the average")},
              }));
}

}  // namespace ddp3d::engine
