#include "worker/engine/eval_loop_registry.h"

#include <memory>

#include "worker/engine/evaluate.h"

namespace ddp3d::engine {
namespace {

// ValLoop and TestLoop: one pass over the dataset (evaluate.h).
class OnePassLoop final : public EvalLoop {
 public:
  MetricMap run(const EvalPass& p) const override {
    return evaluate(p.model, p.dataset, p.loader, p.evaluator, p.ctx, p.draw);
  }
};

config::Registry<EvalLoop> make_builtin_registry() {
  config::Registry<EvalLoop> r("eval_loop");
  for (const char* type : {"ValLoop", "TestLoop"}) {
    r.add(type, [](const config::Config& /*node*/) { return std::make_shared<OnePassLoop>(); });
  }
  return r;
}

}  // namespace

config::Registry<EvalLoop>& eval_loop_registry() {
  static config::Registry<EvalLoop> registry = make_builtin_registry();
  return registry;
}

config::Config val_loop_config(std::string_view yaml) {
  return config::parse_section("val_cfg", yaml, "<val_cfg>");
}

}  // namespace ddp3d::engine
