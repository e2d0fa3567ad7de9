#include "worker/engine/optim_wrapper_registry.h"

#include <memory>
#include <string>

#include "worker/engine/amp_optim_wrapper.h"
#include "worker/engine/optimizer_registry.h"

namespace ddp3d::engine {
namespace {

using Registry = config::Registry<OptimWrapper, const OptimWrapperBuildContext&>;

Registry make_builtin_registry() {
  Registry r("optim_wrapper");
  r.add("OptimWrapper", [](const config::Config& node, const OptimWrapperBuildContext& ctx) {
    return std::make_shared<OptimWrapper>(ctx.model, optim_wrapper_options(node, ctx.max_iters));
  });
  r.add("AmpOptimWrapper", [](const config::Config& node, const OptimWrapperBuildContext& ctx) {
    AmpOptions amp;
    amp.dtype = node.get<std::string>("dtype") == "bfloat16" ? Precision::kBf16 : Precision::kFp16;
    amp.loss_scaler.init_scale = node.get<double>("init_scale");
    check_optim_wrapper_device(node, !ctx.device.is_cpu(), "its model is on " + ctx.device.str());
    return std::make_shared<AmpOptimWrapper>(ctx.model, optim_wrapper_options(node, ctx.max_iters),
                                             amp);
  });
  return r;
}

}  // namespace

Registry& optim_wrapper_registry() {
  static Registry registry = make_builtin_registry();
  return registry;
}

OptimWrapperOptions optim_wrapper_options(const config::Config& node, std::int64_t max_iters) {
  OptimWrapperOptions o;
  o.optimizer = optimizer_spec(node.node("optimizer"));
  o.accumulative_counts = node.get<std::int64_t>("accumulative_counts");
  o.max_iters = max_iters;
  if (node.has("clip_grad")) {
    o.clip_max_norm = node.get<double>("clip_grad.max_norm");
    o.clip_norm_type = node.get<double>("clip_grad.norm_type");
  }
  return o;
}

void check_optim_wrapper_device(const config::Config& node, bool cuda,
                                const std::string& cpu_reason) {
  if (cuda || node.get<std::string>("type") != "AmpOptimWrapper" ||
      node.get<std::string>("dtype") != "float16")
    return;
  throw config::ConfigError(node.origin("dtype"), node.path() + ".dtype",
                            "AmpOptimWrapper with float16 (loss scaling) needs CUDA, but this rank "
                            "runs on CPU (" +
                                cpu_reason +
                                "); use dtype: bfloat16 on CPU, or type: OptimWrapper");
}

config::Config optim_wrapper_config(std::string_view yaml) {
  return config::parse_section("optim_wrapper", yaml, "<optim_wrapper>");
}

}  // namespace ddp3d::engine
