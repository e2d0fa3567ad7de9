// Where a rank runs and the first line it logs (plan_device, pure), and the config check that
// rejects CUDA-only options on a CPU rank, naming key and file (check_device_options).
#include "worker/engine/device_plan.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "worker/components/builtin_components.h"
#include "worker/config/config.h"
#include "worker/process/session.h"

namespace ddp3d::engine {
namespace {

DeviceFacts launched(bool cuda_built, int visible, int gpus, int rank, int world,
                     std::string backend = "auto") {
  DeviceFacts f;
  f.cuda_built = cuda_built;
  f.visible_gpus = visible;
  f.gpus = gpus;
  f.launched = true;
  f.rank = rank;
  f.world_size = world;
  f.local_rank = rank % (gpus > 0 ? gpus : world);
  f.backend = std::move(backend);
  return f;
}

TEST(PlanDevice, CpuBuildStartsCpuRanksOverGlooAndSaysSo) {
  const DevicePlan p = plan_device(launched(false, 0, 4, 0, 4));
  EXPECT_FALSE(p.cuda);
  EXPECT_EQ(p.backend, "gloo");
  EXPECT_EQ(p.summary, "rank 0/4: CPU (no CUDA in this build), 4 processes over Gloo");
}

TEST(PlanDevice, CudaBuildWithoutVisibleDeviceRunsOnCpu) {
  const DevicePlan p = plan_device(launched(true, 0, 2, 1, 2));
  EXPECT_FALSE(p.cuda);
  EXPECT_EQ(p.summary, "rank 1/2: CPU (no CUDA device visible), 2 processes over Gloo");
}

TEST(PlanDevice, GpusZeroRunsOnCpu) {
  const DevicePlan p = plan_device(launched(true, 8, 0, 0, 1));
  EXPECT_FALSE(p.cuda);
  EXPECT_EQ(p.summary, "rank 0/1: CPU (GPUS=0), 1 process over Gloo");
}

TEST(PlanDevice, CudaRankOwnsItsLocalDeviceOverNccl) {
  const DevicePlan p = plan_device(launched(true, 8, 8, 3, 8));
  EXPECT_TRUE(p.cuda);
  EXPECT_EQ(p.device_index, 3);
  EXPECT_EQ(p.backend, "nccl");
  EXPECT_EQ(p.summary, "rank 3/8: cuda:3 of 8 visible GPUs, NCCL");
  // Two nodes of 8: rank 11 is local rank 3.
  DeviceFacts f = launched(true, 8, 8, 11, 16);
  EXPECT_EQ(plan_device(f).summary, "rank 11/16: cuda:3 of 8 visible GPUs, NCCL");
  EXPECT_EQ(plan_device(launched(true, 1, 1, 0, 1)).summary,
            "rank 0/1: cuda:0 of 1 visible GPU, NCCL");
}

TEST(PlanDevice, ExplicitBackendIsKept) {
  EXPECT_EQ(plan_device(launched(true, 2, 2, 0, 2, "gloo")).summary,
            "rank 0/2: cuda:0 of 2 visible GPUs, Gloo");
  const DevicePlan p = plan_device(launched(false, 0, 2, 0, 2, "nccl"));
  EXPECT_FALSE(p.cuda);
  EXPECT_EQ(p.backend, "nccl");  // check_device_options rejects it
}

TEST(PlanDevice, MoreRanksThanVisibleDevicesFails) {
  try {
    plan_device(launched(true, 2, 4, 3, 4));
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("LOCAL_RANK 3 but only 2 CUDA devices are visible"),
              std::string::npos)
        << e.what();
  }
}

TEST(PlanDevice, OneProcessWithoutLauncher) {
  const DevicePlan p = plan_device(DeviceFacts{});
  EXPECT_FALSE(p.cuda);
  EXPECT_EQ(p.backend, "none");
  EXPECT_EQ(p.summary, "rank 0/1: CPU (one process, no launcher), no process group");
}

const char* const kBase =
    "model: {type: ToyRegressor, in_features: 4}\n"
    "train_dataloader:\n"
    "  batch_size: 8\n"
    "  dataset: {type: SyntheticRegression, num_samples: 64}\n"
    "train_cfg: {max_epochs: 1}\n";

std::string device_error(const std::string& yaml, const DevicePlan& plan,
                         const std::string& command = "train") {
  // The toy components' schemas, as the binary registers them at start.
  [[maybe_unused]] static const bool registered = (components::register_builtin_schemas(), true);
  const config::Config cfg = config::parse(kBase + yaml, "x.yaml");
  try {
    process::check_device_options(cfg, plan, command);
  } catch (const config::ConfigError& e) {
    return e.what();
  }
  return "";
}

const std::string kSgd = "optim_wrapper:\n  optimizer: {type: SGD, lr: 0.1}\n";
const std::string kAmp =
    "optim_wrapper:\n  type: AmpOptimWrapper\n  optimizer: {type: SGD, lr: 0.1}\n";

TEST(CheckDeviceOptions, NcclOnCpuNamesTheKeyAndFile) {
  const DevicePlan cpu = plan_device(launched(false, 0, 2, 0, 2, "nccl"));
  const std::string e = device_error(kSgd + "env_cfg: {dist_cfg: {backend: nccl}}\n", cpu);
  EXPECT_NE(e.find("x.yaml:8: env_cfg.dist_cfg.backend: nccl needs CUDA, but this rank runs on "
                   "CPU (no CUDA in this build)"),
            std::string::npos)
      << e;
  EXPECT_NE(device_error(kSgd + "env_cfg: {dist_cfg: {backend: nccl}}\n", cpu, "test"), "");
  const DevicePlan gpu = plan_device(launched(true, 2, 2, 0, 2, "nccl"));
  EXPECT_EQ(device_error(kSgd + "env_cfg: {dist_cfg: {backend: nccl}}\n", gpu), "");
}

TEST(CheckDeviceOptions, Fp16AmpOnCpuNamesTheKeyAndFile) {
  const DevicePlan cpu = plan_device(launched(false, 0, 2, 0, 2));
  const std::string e = device_error(kAmp + "  dtype: float16\n", cpu);
  EXPECT_NE(e.find("x.yaml:9: optim_wrapper.dtype: AmpOptimWrapper with float16 (loss scaling) "
                   "needs CUDA, but this rank runs on CPU (no CUDA in this build)"),
            std::string::npos)
      << e;
  // dtype defaults to float16.
  EXPECT_NE(device_error(kAmp, cpu).find("optim_wrapper.dtype: AmpOptimWrapper"),
            std::string::npos);
  EXPECT_NE(device_error(kAmp, plan_device(DeviceFacts{})), "");  // one CPU process too
  // What works on CPU, and fp16 on CUDA, and `test` (no optimizer) pass.
  EXPECT_EQ(device_error(kAmp + "  dtype: bfloat16\n", cpu), "");
  EXPECT_EQ(device_error(kSgd, cpu), "");
  EXPECT_EQ(device_error(kAmp, cpu, "test"), "");
  EXPECT_EQ(device_error(kAmp, plan_device(launched(true, 2, 2, 0, 2))), "");
}

}  // namespace
}  // namespace ddp3d::engine
