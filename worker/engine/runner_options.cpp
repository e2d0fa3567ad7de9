#include "worker/engine/runner_options.h"

#include "worker/config/config.h"
#include "worker/engine/param_scheduler_registry.h"

namespace ddp3d::engine {
namespace {

LoaderSpec loader_spec(const config::Config& cfg, const std::string& section) {
  const config::Config c = cfg.node(section);
  LoaderSpec s;
  s.section = section;
  s.batch_size = c.get<std::int64_t>("batch_size");
  s.num_workers = c.get<int>("num_workers");
  s.drop_last = c.get<bool>("drop_last");
  s.shuffle = c.get<bool>("sampler.shuffle");
  if (c.has("sampler.seed")) s.seed = c.get<std::int64_t>("sampler.seed");
  return s;
}

}  // namespace

RunnerOptions runner_options_from_config(const config::Config& cfg) {
  RunnerOptions o;
  o.work_dir = cfg.has("work_dir") ? std::filesystem::path(cfg.get<std::string>("work_dir"))
                                   : std::filesystem::path("work_dirs") / cfg.file().stem();

  o.train_cfg = cfg.node("train_cfg");
  o.val_cfg = cfg.node("val_cfg");
  o.optim_wrapper = cfg.node("optim_wrapper");

  if (cfg.has("param_scheduler")) {
    const std::vector<config::Config> phases = cfg.list("param_scheduler");
    for (std::size_t i = 0; i < phases.size(); ++i) {
      const config::Config& p = phases[i];
      SchedulePhase ph = *param_scheduler_registry().build(p);
      ph.name = "param_scheduler." + std::to_string(i) + " (" + p.get<std::string>("type") + ")";
      o.schedule.push_back(ph);
    }
  }

  o.train_loader = loader_spec(cfg, "train_dataloader");
  if (cfg.has("val_dataloader")) o.val_loader = loader_spec(cfg, "val_dataloader");

  o.default_hooks = cfg.node("default_hooks");
  if (cfg.has("custom_hooks")) o.custom_hooks = cfg.list("custom_hooks");

  o.find_unused_parameters = cfg.get<bool>("ddp.find_unused_parameters");
  o.bucket_cap_mb = cfg.get<double>("ddp.bucket_cap_mb");
  o.first_bucket_cap_mb = cfg.get<double>("ddp.first_bucket_cap_mb");
  o.broadcast_buffers = cfg.get<bool>("ddp.broadcast_buffers");

  if (cfg.get<bool>("resume")) {
    o.resume = cfg.has("load_from") ? cfg.get<std::string>("load_from") : "auto";
  }
  return o;
}

}  // namespace ddp3d::engine
