// optim_wrapper from config (mmengine's OPTIM_WRAPPERS): `optim_wrapper: {type: OptimWrapper,
// optimizer: {type: SGD, ...}, clip_grad: ...}`. Built in: OptimWrapper and AmpOptimWrapper. A
// new wrapper is a subclass of OptimWrapper, its keys (component kind "optim_wrapper", after
// optim_wrapper_fields' common ones, optim_wrapper_schemas.h) and one add() here or from its own
// library.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "worker/config/config.h"
#include "worker/config/registry.h"
#include "worker/engine/optim_wrapper.h"

namespace ddp3d::engine {

// What a wrapper needs besides its config.
struct OptimWrapperBuildContext {
  Model& model;                // outlives the wrapper
  std::int64_t max_iters = 1;  // iterations of the whole training
  c10::Device device = c10::kCPU;
};

config::Registry<OptimWrapper, const OptimWrapperBuildContext&>& optim_wrapper_registry();

// The keys every wrapper has (optimizer, clip_grad, accumulative_counts) from its validated node.
OptimWrapperOptions optim_wrapper_options(const config::Config& node, std::int64_t max_iters);

// AmpOptimWrapper with float16 scales the loss, which only CUDA does: on a rank that runs on CPU
// (`cuda` false; `cpu_reason` says why, for the message) throws config::ConfigError naming
// `<node>.dtype`. Called before any process group starts and again when the wrapper is built.
void check_optim_wrapper_device(const config::Config& node, bool cuda,
                                const std::string& cpu_reason);

// An optim_wrapper mapping from YAML ("{optimizer: {type: SGD, lr: 0.1}}"), validated, with
// the schema's defaults: options built in code use it where a config's node goes. Needs the
// schemas registered (components::register_builtin_schemas()).
config::Config optim_wrapper_config(std::string_view yaml);

}  // namespace ddp3d::engine
