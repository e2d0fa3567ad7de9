#include "worker/engine/hooks/hook_schemas.h"

#include <string>
#include <utility>
#include <vector>

#include "worker/config/cross_check.h"
#include "worker/config/schema.h"
#include "worker/config/value.h"

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

bool set(const config::Value* v) {
  return v != nullptr && !v->is_null();
}

// save_best compares validations, so it needs one; an empty name is neither a metric nor auto.
void check_checkpoint_hook(config::CrossCheck& check, const std::string& key) {
  const std::string save_best = key + ".save_best";
  const config::Value* metric = check.at(save_best);
  if (!set(metric)) return;
  check.expect(!metric->as_string().empty(), save_best, "a metric name, auto, or null (off)");
  check.expect(set(check.at("val_dataloader")) && set(check.at("val_evaluator")), save_best,
               "needs validation: set val_dataloader and val_evaluator");
}

}  // namespace

void register_hook_schemas(config::ComponentSchemas& schemas) {
  // default_hooks' standard hooks (they may also be named in custom_hooks).
  schemas.add("hook", "IterTimerHook", with_priority({}));
  schemas.add(
      "hook", "LoggerHook",
      with_priority({{"interval", S::integer().min(1).def(50).doc("log every N iterations")}}));
  schemas.add("hook", "ParamSchedulerHook", with_priority({}));
  schemas.add(
      "hook", "CheckpointHook",
      with_priority(
          {{"interval",
            S::integer().def(-1).doc("every N epochs (by_epoch) or N iterations; -1: only the "
                                     "last")},
           {"by_epoch", S::boolean().def(true).doc(
                            "interval counts epochs (epoch_<N>.pth) or iterations (iter_<N>.pth, "
                            "at update boundaries)")},
           {"interval_seconds", S::number()
                                    .min(0, /*exclusive=*/true)
                                    .def_null()
                                    .doc("also save iter_<N>.pth once this many seconds passed "
                                         "since the last checkpoint "
                                         "(ranks agree on the iteration)")},
           {"max_keep_ckpts", S::integer().def(-1).doc("keep the newest N; -1: keep all")},
           {"save_last", S::boolean().def(true).doc("also save after the last epoch")},
           {"save_best",
            S::string().def_null().doc(
                "keep best_<metric>_epoch_<N>.pth of the best validation by this metric (e.g. "
                "KITTI/Car_3D_AP40_moderate_strict); auto: the evaluator's key metric; null: "
                "off")},
           {"rule",
            S::string()
                .one_of({"greater", "less"})
                .def_null()
                .doc("save_best: which way is better; null: the key metric's way for it, else "
                     "greater")}}),
      check_checkpoint_hook);
  // The loop derives each epoch's order from (seed, epoch) itself (data_order.h): accepted for
  // mmengine configs, it adds no hook.
  schemas.add("hook", "DistSamplerSeedHook", with_priority({}));
  // mmdet3d's Det3DVisualizationHook, during training's validation (val_pictures_hook.h).
  schemas.add("hook", "Det3DVisualizationHook",
              with_priority({{"draw", S::boolean().def(false).doc(
                                          "after each validation, bird's-eye views of validation "
                                          "frames to the visualization backends (TensorBoard "
                                          "images val/bev/<frame>, vis_data/vis_image/)")},
                             {"frames", S::integer().min(1).def(8).doc(
                                            "the frames with a dataset index below it that rank 0 "
                                            "evaluates (about frames / world size of them)")},
                             {"score_thr", S::number().min(0).max(1).def(0.1).doc(
                                               "predictions below this score are not drawn")}}));
  schemas.add(
      "hook", "CheckInvalidLossHook",
      with_priority({{"on_invalid", S::string()
                                        .one_of({"stop", "skip"})
                                        .def("stop")
                                        .doc("a non-finite loss on any rank: stop every rank "
                                             "with an error naming it, or skip the iteration "
                                             "on every rank")},
                     {"max_skips", S::integer().min(0).def(100).doc(
                                       "on_invalid: skip stops once more iterations than "
                                       "this were skipped in the run")}}));
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
