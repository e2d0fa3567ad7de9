#include "worker/engine/hooks/hook_components.h"

#include <memory>
#include <stdexcept>
#include <string>

#include "worker/engine/evaluator.h"
#include "worker/engine/hook_registry.h"
#include "worker/engine/hooks/checkpoint_hook.h"
#include "worker/engine/hooks/ema_hook.h"
#include "worker/engine/hooks/invalid_loss_hook.h"
#include "worker/engine/hooks/iter_timer_hook.h"
#include "worker/engine/hooks/logger_hook.h"
#include "worker/engine/hooks/param_scheduler_hook.h"
#include "worker/engine/hooks/val_pictures_hook.h"
#include "worker/engine/optim_wrapper.h"

namespace ddp3d::engine {
namespace {

// A hook that drives the runner's optimizer or schedule cannot be built without them.
template <typename T>
T& needs(T* part, const config::Config& cfg, const char* what) {
  if (part == nullptr) {
    throw std::logic_error(cfg.path() + " (" + cfg.get<std::string>("type") + ") needs the " +
                           what);
  }
  return *part;
}

std::shared_ptr<Hook> checkpoint_hook(const config::Config& cfg, const HookBuildContext& ctx) {
  CheckpointHookOptions o;
  o.work_dir = ctx.work_dir;
  o.interval = cfg.get<std::int64_t>("interval");
  o.max_keep = cfg.get<int>("max_keep_ckpts");
  o.by_epoch = cfg.get<bool>("by_epoch");
  o.save_last = cfg.get<bool>("save_last");
  if (cfg.has("interval_seconds")) o.interval_seconds = cfg.get<double>("interval_seconds");
  // Only an update boundary is a stopping point; no wrapper (a test's hook alone): every iteration.
  if (ctx.optim != nullptr) o.accumulative_counts = ctx.optim->options().accumulative_counts;
  if (cfg.has("save_best")) o.save_best = cfg.get<std::string>("save_best");
  if (cfg.has("rule")) o.rule = cfg.get<std::string>("rule");
  if (ctx.val_evaluator != nullptr) {
    o.key_metric = [evaluator = ctx.val_evaluator](const MetricMap& metrics) {
      return evaluator->key_metric(metrics);
    };
  }
  o.resumed = ctx.resumed;
  return std::make_shared<CheckpointHook>(std::move(o), ctx.log);
}

}  // namespace

void register_hook_components() {
  HookRegistry& r = hook_registry();
  r.add(
      "IterTimerHook",
      [](const config::Config&, const HookBuildContext&) {
        return std::make_shared<IterTimerHook>();
      },
      HookPriority::kNormal);
  // Before any other after_train_forward hook sees the losses.
  r.add(
      "CheckInvalidLossHook",
      [](const config::Config& cfg, const HookBuildContext& ctx) {
        InvalidLossHookOptions o;
        o.on_invalid = cfg.get<std::string>("on_invalid") == "skip" ? InvalidLossAction::kSkip
                                                                    : InvalidLossAction::kStop;
        o.max_skips = cfg.get<std::int64_t>("max_skips");
        return std::make_shared<InvalidLossHook>(o, ctx.log);
      },
      HookPriority::kVeryHigh);
  r.add(
      "ParamSchedulerHook",
      [](const config::Config& cfg, const HookBuildContext& ctx) {
        return std::make_shared<ParamSchedulerHook>(needs(ctx.schedule, cfg, "parameter schedule"),
                                                    needs(ctx.optim, cfg, "optimizer wrapper"));
      },
      HookPriority::kLow);
  r.add(
      "LoggerHook",
      [](const config::Config& cfg, const HookBuildContext& ctx) {
        return std::make_shared<LoggerHook>(ctx.log, ctx.run.pg, cfg.get<std::int64_t>("interval"));
      },
      HookPriority::kBelowNormal);
  r.add("CheckpointHook", checkpoint_hook, HookPriority::kVeryLow);
  // The loop reseeds each epoch's order itself (data_order.h).
  r.add(
      "DistSamplerSeedHook",
      [](const config::Config&, const HookBuildContext&) { return std::shared_ptr<Hook>(); },
      HookPriority::kNormal);
  r.add(
      "Det3DVisualizationHook",
      [](const config::Config& cfg, const HookBuildContext& ctx) -> std::shared_ptr<Hook> {
        if (!cfg.get<bool>("draw")) return nullptr;
        DrawOptions draw{ctx.work_dir / ".val_pictures", cfg.get<std::int64_t>("frames"),
                         cfg.get<double>("score_thr")};
        return std::make_shared<ValPicturesHook>(ctx.log, std::move(draw));
      },
      HookPriority::kNormal);
  r.add(
      "EMAHook",
      [](const config::Config& cfg, const HookBuildContext& ctx) {
        EmaHookOptions o;
        o.momentum = cfg.get<double>("momentum");
        o.interval = cfg.get<std::int64_t>("interval");
        o.begin_iter = cfg.get<std::int64_t>("begin_iter");
        return std::make_shared<EmaHook>(ctx.model, o);
      },
      HookPriority::kNormal);
}

}  // namespace ddp3d::engine
