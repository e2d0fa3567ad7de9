#include "worker/engine/runner_options.h"

#include "worker/config/config.h"

namespace ddp3d::engine {
namespace {

ScheduleKind schedule_kind(const std::string& type, ScheduledParam* param) {
  *param =
      type.find("Momentum") != std::string::npos ? ScheduledParam::kMomentum : ScheduledParam::kLr;
  if (type == "StepLR" || type == "StepMomentum") return ScheduleKind::kStep;
  if (type == "MultiStepLR" || type == "MultiStepMomentum") return ScheduleKind::kMultiStep;
  if (type == "LinearLR" || type == "LinearMomentum") return ScheduleKind::kLinear;
  if (type == "ConstantLR" || type == "ConstantMomentum") return ScheduleKind::kConstant;
  return ScheduleKind::kCosine;  // CosineAnnealingLR / CosineAnnealingMomentum
}

LoaderSpec loader_spec(const config::Config& cfg, const std::string& section) {
  const config::Config c = cfg.node(section);
  LoaderSpec s;
  s.section = section;
  s.batch_size = c.get<std::int64_t>("batch_size");
  s.num_workers = c.get_or<int>("num_workers", 0);
  s.drop_last = c.get_or<bool>("drop_last", false);
  s.shuffle = c.get_or<bool>("sampler.shuffle", s.shuffle);
  if (c.has("sampler.seed")) s.seed = c.get<std::int64_t>("sampler.seed");
  return s;
}

}  // namespace

RunnerOptions runner_options_from_config(const config::Config& cfg) {
  RunnerOptions o;
  o.config_name = cfg.file().stem().string();
  o.work_dir = cfg.has("work_dir") ? std::filesystem::path(cfg.get<std::string>("work_dir"))
                                   : std::filesystem::path("work_dirs") / o.config_name;

  const config::Config train = cfg.node("train_cfg");
  if (!train.get_or<bool>("by_epoch", true)) {
    throw config::ConfigError(cfg.origin("train_cfg.by_epoch"), "train_cfg.by_epoch",
                              "iteration-based training loops are not supported; use max_epochs");
  }
  o.max_epochs = train.get<std::int64_t>("max_epochs");
  o.val_interval = train.get_or<std::int64_t>("val_interval", 1);
  o.val_begin = train.get_or<std::int64_t>("val_begin", 1);

  const config::Config ow = cfg.node("optim_wrapper");
  const config::Config opt = ow.node("optimizer");
  OptimizerSpec& s = o.optimizer;
  s.type = opt.get<std::string>("type");
  s.lr = opt.get<double>("lr");
  s.weight_decay = opt.get_or<double>("weight_decay", 0.0);
  if (s.type == "SGD") {
    s.momentum = opt.get_or<double>("momentum", 0.0);
    s.dampening = opt.get_or<double>("dampening", 0.0);
    s.nesterov = opt.get_or<bool>("nesterov", false);
  } else {
    const auto betas = opt.get_or<std::vector<double>>("betas", {0.9, 0.999});
    s.beta1 = betas.at(0);
    s.beta2 = betas.at(1);
    s.eps = opt.get_or<double>("eps", 1e-8);
    s.amsgrad = opt.get_or<bool>("amsgrad", false);
  }
  if (ow.has("clip_grad")) {
    o.clip_max_norm = ow.get<double>("clip_grad.max_norm");
    o.clip_norm_type = ow.get_or<double>("clip_grad.norm_type", 2.0);
  }
  o.accumulative_counts = ow.get_or<std::int64_t>("accumulative_counts", 1);
  if (ow.get_or<std::string>("type", "OptimWrapper") == "AmpOptimWrapper") {
    o.precision = ow.get_or<std::string>("dtype", "float16") == "bfloat16" ? Precision::kBf16
                                                                           : Precision::kFp16;
    o.loss_scaler.init_scale = ow.get_or<double>("init_scale", 65536.0);
  }

  if (cfg.has("param_scheduler")) {
    const std::vector<config::Config> phases = cfg.list("param_scheduler");
    for (std::size_t i = 0; i < phases.size(); ++i) {
      const config::Config& p = phases[i];
      SchedulePhase ph;
      const std::string type = p.get<std::string>("type");
      ph.kind = schedule_kind(type, &ph.param);
      ph.name = "param_scheduler." + std::to_string(i) + " (" + type + ")";
      ph.by_epoch = p.get_or<bool>("by_epoch", true);
      ph.convert_to_iter_based = p.get_or<bool>("convert_to_iter_based", false);
      ph.begin = p.get_or<double>("begin", 0.0);
      if (p.has("end")) ph.end = p.get<double>("end");
      ph.step_size = p.get_or<double>("step_size", 1.0);
      ph.milestones = p.get_or<std::vector<double>>("milestones", {});
      ph.gamma = p.get_or<double>("gamma", 0.1);
      ph.start_factor = p.get_or<double>("start_factor", 1.0 / 3);
      ph.end_factor = p.get_or<double>("end_factor", 1.0);
      ph.factor = p.get_or<double>("factor", 1.0 / 3);
      ph.t_max = p.get_or<double>("T_max", 1.0);
      ph.eta_min = p.get_or<double>("eta_min", 0.0);
      o.schedule.push_back(ph);
    }
  }

  o.train_loader = loader_spec(cfg, "train_dataloader");
  if (cfg.has("val_dataloader")) o.val_loader = loader_spec(cfg, "val_dataloader");

  o.log_interval = cfg.get_or<std::int64_t>("default_hooks.logger.interval", 50);
  o.checkpoint_interval = cfg.get_or<std::int64_t>("default_hooks.checkpoint.interval", 1);
  o.checkpoint_by_epoch = cfg.get_or<bool>("default_hooks.checkpoint.by_epoch", true);
  o.checkpoint_save_last = cfg.get_or<bool>("default_hooks.checkpoint.save_last", true);
  if (cfg.has("default_hooks.checkpoint.interval_seconds")) {
    o.checkpoint_interval_seconds = cfg.get<double>("default_hooks.checkpoint.interval_seconds");
  }
  o.max_keep_ckpts = cfg.get_or<int>("default_hooks.checkpoint.max_keep_ckpts", -1);
  o.skip_invalid_loss =
      cfg.get_or<std::string>("default_hooks.check_invalid_loss.on_invalid", "stop") == "skip";
  o.max_invalid_loss_skips =
      cfg.get_or<std::int64_t>("default_hooks.check_invalid_loss.max_skips", 100);
  o.val_pictures = cfg.get_or<bool>("default_hooks.visualization.draw", false);
  o.val_picture_frames = cfg.get_or<std::int64_t>("default_hooks.visualization.frames", 8);
  o.val_picture_score_thr = cfg.get_or<double>("default_hooks.visualization.score_thr", 0.1);
  o.val_picture_dir = o.work_dir / ".val_pictures";

  o.deterministic = cfg.get_or<bool>("randomness.deterministic", false);

  o.find_unused_parameters = cfg.get_or<bool>("ddp.find_unused_parameters", false);
  o.bucket_cap_mb = cfg.get_or<double>("ddp.bucket_cap_mb", 25.0);
  o.first_bucket_cap_mb = cfg.get_or<double>("ddp.first_bucket_cap_mb", 1.0);
  o.broadcast_buffers = cfg.get_or<bool>("ddp.broadcast_buffers", true);

  if (cfg.get_or<bool>("resume", false)) {
    o.resume = cfg.has("load_from") ? cfg.get<std::string>("load_from") : "auto";
  }
  return o;
}

}  // namespace ddp3d::engine
