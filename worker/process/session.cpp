#include "worker/process/session.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#ifdef DDP3D_WITH_CUDA
#include <c10/cuda/CUDAFunctions.h>
#endif

#include "common/io/atomic_file.h"
#include "common/local_time.h"
#include "common/log.h"
#include "worker/dist/default_process_group.h"
#include "worker/dist/dist_env.h"
#include "worker/dist/process_group.h"
#include "worker/engine/collectives.h"
#include "worker/engine/optim_wrapper_registry.h"
#include "worker/engine/registry.h"

namespace ddp3d::process {
namespace {

void check_type(const config::Config& cfg, const std::string& key, auto& registry) {
  if (!cfg.has(key + ".type")) return;
  const std::string type = cfg.get<std::string>(key + ".type");
  if (!registry.contains(type)) registry.build(cfg.node(key));  // throws the named error
}

// visualizer.vis_backends' types (the schema checked them); LocalVisBackend alone by default.
// TensorBoard charts training steps: `test` leaves its event files alone.
std::vector<std::string> vis_backend_types(const config::Config& cfg, const std::string& command) {
  if (!cfg.has("visualizer.vis_backends")) return {"LocalVisBackend"};
  std::vector<std::string> types;
  for (const config::Config& backend : cfg.list("visualizer.vis_backends")) {
    const auto type = backend.get<std::string>("type");
    if (command == "train" || type != "TensorboardVisBackend") types.push_back(type);
  }
  return types;
}

std::filesystem::path work_dir_of(const config::Config& cfg) {
  return cfg.has("work_dir") ? std::filesystem::path(cfg.get<std::string>("work_dir"))
                             : std::filesystem::path("work_dirs") / cfg.file().stem();
}

// The writing rank's folders (the work dir, TensorBoard's) exist and take a file, checked
// before the process group: a read-only or misspelt path fails at once, naming the key,
// rather than on rank 0 after every rank joined.
void check_work_dir(const config::Config& cfg, const std::string& command) {
  const std::filesystem::path dir = work_dir_of(cfg);
  std::vector<std::filesystem::path> dirs{dir};
  for (const std::string& type : vis_backend_types(cfg, command))
    if (type == "TensorboardVisBackend") dirs.push_back(dir / "tensorboard");
  for (const std::filesystem::path& d : dirs) {
    try {
      std::filesystem::create_directories(d);
      const std::filesystem::path probe = d / (".ddp3d-write-check-" + std::to_string(::getpid()));
      io::write_file_atomically(probe, "");
      std::filesystem::remove(probe);
    } catch (const std::exception& e) {
      throw config::ConfigError(cfg.has("work_dir") ? cfg.origin("work_dir") : cfg.file().string(),
                                "work_dir", "cannot write " + d.string() + ": " + e.what());
    }
  }
}

}  // namespace

Session::~Session() = default;

void check_component_types(const config::Config& cfg) {
  check_type(cfg, "model", engine::model_registry());
  for (const char* loader : {"train_dataloader", "val_dataloader", "test_dataloader"}) {
    const std::string key = std::string(loader) + ".dataset";
    check_type(cfg, key, engine::dataset_registry());
  }
  check_type(cfg, "val_evaluator", engine::evaluator_registry());
  check_type(cfg, "test_evaluator", engine::evaluator_registry());
}

engine::DevicePlan plan_session_device(const config::Config& cfg, const std::string& launcher,
                                       const std::string& command) {
  const bool launched = launcher == "pytorch";
  engine::DevicePlan plan = engine::plan_device(engine::device_facts_from_environment(
      launched, cfg.get<std::string>("env_cfg.dist_cfg.backend")));
  if (launched) {
    ddp3d::log::set_prefix("[rank " + std::to_string(dist::dist_env_from_environment().rank) + "]");
  }
  ddp3d::log::info(plan.summary);
  check_device_options(cfg, plan, command);
  return plan;
}

void check_device_options(const config::Config& cfg, const engine::DevicePlan& plan,
                          const std::string& command) {
  if (plan.cuda) return;
  const std::string cpu = "this rank runs on CPU (" + plan.cpu_reason + ")";
  if (plan.backend == "nccl") {
    const std::string key = "env_cfg.dist_cfg.backend";
    throw config::ConfigError(cfg.origin(key), key,
                              "nccl needs CUDA, but " + cpu + "; use auto (gloo on CPU) or gloo");
  }
  if (command == "train")
    engine::check_optim_wrapper_device(cfg.node("optim_wrapper"), false, plan.cpu_reason);
}

std::unique_ptr<Session> start_session(const config::Config& cfg, const std::string& launcher,
                                       const std::string& command, const engine::DevicePlan& plan) {
  auto s = std::make_unique<Session>();
  dist::DistEnv env;  // one process unless launched
  if (launcher != "pytorch" || dist::dist_env_from_environment().rank == 0)
    check_work_dir(cfg, command);
  if (launcher == "pytorch") {
    env = dist::dist_env_from_environment();
    dist::ProcessGroupOptions opts;
    const bool cuda = plan.cuda;
    opts.backend = dist::parse_backend(plan.backend);
    opts.timeout = std::chrono::seconds(cfg.get<std::int64_t>("env_cfg.dist_cfg.timeout"));
    opts.shared_memory_allreduce = cfg.get<bool>("env_cfg.dist_cfg.shared_memory_allreduce");
    const auto ms = [](double s) { return std::chrono::milliseconds(std::llround(s * 1000.0)); };
    opts.heartbeat.interval = ms(cfg.get<double>("env_cfg.dist_cfg.heartbeat_interval"));
    opts.heartbeat.timeout = ms(cfg.get<double>("env_cfg.dist_cfg.heartbeat_timeout"));
#ifdef DDP3D_WITH_CUDA
    // torch.cuda.set_device(LOCAL_RANK): NCCL and every index-less kCUDA tensor (barrier,
    // collectives) use the current device, which must be this rank's own (plan_device checked
    // that it exists).
    if (cuda) c10::cuda::set_device(static_cast<c10::DeviceIndex>(plan.device_index));
#endif
    s->pg = dist::init_process_group(env, opts);
    s->default_group = std::make_unique<dist::DefaultProcessGroupGuard>(s->pg.get());
    s->backend = dist::backend_name(opts.backend);
#ifdef DDP3D_WITH_CUDA
    if (cuda)
      s->ctx.device = at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(plan.device_index));
#else
    (void)cuda;
#endif
  }
  s->ctx.pg = s->pg.get();
  s->ctx.rank = env.rank;
  s->ctx.world_size = env.world_size;
  // One process may still train the global batch of several (DDP3D_BATCH_WORLD_SIZE).
  s->ctx.batch_world_size = launcher == "pytorch"
                                ? env.batch_world_size
                                : dist::batch_world_size_from_environment(env.world_size);

  // Several ranks on one host share its cores: without OMP_NUM_THREADS (torchrun sets 1), give
  // each rank its share instead of letting every rank spawn one thread per core.
  if (std::getenv("OMP_NUM_THREADS") == nullptr && env.local_world_size > 1) {
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    at::set_num_threads(std::max(1, cores / env.local_world_size));
  }

  // One seed for all ranks: the config's, or rank 0's random draw.
  std::int64_t seed = cfg.has("randomness.seed")
                          ? cfg.get<std::int64_t>("randomness.seed")
                          : static_cast<std::int64_t>(std::random_device{}() & 0x7fffffff);
  seed = engine::broadcast_int(s->ctx.pg, seed);
  s->ctx.seed = static_cast<std::uint64_t>(seed);
  const bool deterministic = cfg.get<bool>("randomness.deterministic");
  if (deterministic) {
    at::globalContext().setDeterministicAlgorithms(true, /*warn_only=*/false);
    at::globalContext().setDeterministicCuDNN(true);
    at::globalContext().setBenchmarkCuDNN(false);
  }

  const std::string name = cfg.file().stem().string();
  s->work_dir = work_dir_of(cfg);
  std::string stamp = format_local_now("%Y%m%d_%H%M%S");
  const bool rank0 = s->ctx.rank == 0;
  if (rank0) {
    // A run restarted within the same second (a resume right after a crash) gets its own
    // run dir rather than appending to the previous run's logs.
    const std::string second = stamp;
    for (int n = 1; std::filesystem::exists(s->work_dir / stamp); ++n) {
      stamp = second + "_" + std::to_string(n);
    }
    std::filesystem::create_directories(s->work_dir);
    io::write_file_atomically(s->work_dir / (name + ".yaml"), cfg.dump_yaml());
  }
  s->log = std::make_unique<engine::TrainLog>(rank0, s->work_dir / stamp, stamp,
                                              vis_backend_types(cfg, command));
  s->log->info("ddp3d " + command + ": world size " + std::to_string(s->ctx.world_size) +
               (s->ctx.batch_world_size != s->ctx.world_size
                    ? " (global batch defined at " + std::to_string(s->ctx.batch_world_size) +
                          ", DDP3D_BATCH_WORLD_SIZE)"
                    : std::string()) +
               ", backend " + s->backend + ", device " + s->ctx.device.str() + ", seed " +
               std::to_string(seed) + ", deterministic " + (deterministic ? "true" : "false") +
               ", intra-op threads " + std::to_string(at::get_num_threads()));
  s->log->info("config " + cfg.file().string() + ", work dir " + s->work_dir.string());
  return s;
}

}  // namespace ddp3d::process
