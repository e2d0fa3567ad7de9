// Everything the runner reads from a config, as plain values (runner_options.cpp parses them
// from a loaded config::Config; tests build them directly).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "worker/config/config.h"
#include "worker/engine/param_schedule.h"

namespace ddp3d::engine {

// optim_wrapper.optimizer: the keys of the built-in types (optimizer_registry.h reads them by
// type); a registered type with keys of its own reads them from `node`.
struct OptimizerSpec {
  std::string type = "AdamW";  // a registered type: AdamW, Adam, SGD, ...
  double lr = 1e-3;
  double weight_decay = 0;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  bool amsgrad = false;
  double momentum = 0;  // SGD
  double dampening = 0;
  bool nesterov = false;
  config::Config node;  // the validated mapping (empty when built in code)
};

struct LoaderSpec {
  std::string section;  // the config mapping it came from ("train_dataloader"), for errors
  std::int64_t batch_size = 1;
  int num_workers = 0;
  bool shuffle = true;
  bool drop_last = false;
  std::optional<std::int64_t> seed;  // null: the run's seed

  std::string num_workers_key() const {
    return section.empty() ? "num_workers" : section + ".num_workers";
  }
};

struct RunnerOptions {
  std::filesystem::path work_dir;
  // train_cfg: the validated mapping (train_loop_registry() builds the loop plan it names when
  // training starts; options built in code take train_loop_config("{max_epochs: 2}")).
  config::Config train_cfg;
  // val_cfg: the validated mapping (eval_loop_registry() builds the loop it names when training
  // starts with validation data; options built in code take val_loop_config("{}")).
  config::Config val_cfg;
  // optim_wrapper: the validated mapping (optim_wrapper_registry() builds the wrapper it names
  // when training starts; options built in code take optim_wrapper_config("{optimizer: ...}")).
  config::Config optim_wrapper;
  // param_scheduler
  std::vector<SchedulePhase> schedule;
  // data
  LoaderSpec train_loader;
  std::optional<LoaderSpec> val_loader;
  // default_hooks: the validated mapping (hook_registry() builds each key's hook when training
  // starts, in default_hook_keys() order; a null key adds none); nullopt: the schema's defaults
  // (default_hooks_config()).
  std::optional<config::Config> default_hooks;
  // ddp
  bool find_unused_parameters = false;
  double bucket_cap_mb = 25;
  double first_bucket_cap_mb = 1;
  bool broadcast_buffers = true;
  // resume: "" none, "auto", or a checkpoint path
  std::string resume;
  // custom_hooks: one config node per hook, built by hook_registry() when training starts.
  std::vector<config::Config> custom_hooks;
};

// Reads the options from a loaded (validated) config. Throws config::ConfigError naming the key
// and file for values the schema cannot check (e.g. SGD-only keys on AdamW).
RunnerOptions runner_options_from_config(const config::Config& cfg);

}  // namespace ddp3d::engine
