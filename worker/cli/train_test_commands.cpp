#include "worker/cli/train_test_commands.h"

#include <ATen/ATen.h>
#include <torch/utils.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <optional>

#include "common/exit_codes.h"
#include "common/io/atomic_file.h"
#include "common/log.h"
#include "worker/cli/cli_args.h"
#include "worker/cli/output_dir.h"
#include "worker/config/config.h"
#include "worker/dist/dist_env.h"
#include "worker/dist/peer_loss_error.h"
#include "worker/dist/process_group.h"
#include "worker/engine/checkpoint.h"
#include "worker/engine/checkpoint_file.h"
#include "worker/engine/eval_loop_registry.h"
#include "worker/engine/registry.h"
#include "worker/engine/run_summary.h"
#include "worker/engine/runner.h"
#include "worker/engine/runner_options.h"
#include "worker/process/session.h"
#include "worker/process/termination_signals.h"
#include "worker/telemetry/worker_metrics.h"

namespace ddp3d::cli {
namespace {

std::vector<std::string> rest(int argc, char** argv) {
  return std::vector<std::string>(argv + 1, argv + argc);
}

std::optional<std::string> env_value(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::nullopt : std::optional<std::string>(v);
}

// The rank's /metrics endpoint, or null when neither DDP3D_METRICS_PORT nor
// env_cfg.metrics_port asks for one.
std::unique_ptr<telemetry::WorkerMetrics> start_worker_metrics(const config::Config& cfg,
                                                               const std::string& launcher) {
  const dist::DistEnv env =
      launcher == "pytorch" ? dist::dist_env_from_environment() : dist::DistEnv{};
  std::optional<std::int64_t> config_port;
  if (cfg.has("env_cfg.metrics_port")) config_port = cfg.get<std::int64_t>("env_cfg.metrics_port");
  telemetry::MetricsEndpointSettings settings = telemetry::resolve_metrics_endpoint(
      env_value("DDP3D_METRICS_PORT"), config_port, env.local_rank, env.rank,
      env_value("DDP3D_JOB").value_or(""));
  if (!settings.enabled) return nullptr;
  settings.address = telemetry::resolve_metrics_address(env_value("DDP3D_METRICS_ADDRESS"));
  auto metrics = std::make_unique<telemetry::WorkerMetrics>(settings);
  ddp3d::log::info("metrics: serving http://" + settings.address + ":" +
                   std::to_string(metrics->port()) + "/metrics (" + settings.origin + ", rank " +
                   settings.labels.rank + ", job_name " + settings.labels.job_name + ")");
  return metrics;
}

// Runs `body`, mapping failures to exit codes and one clear message.
template <typename F>
int guarded(const char* usage, F&& body) {
  try {
    return body();
  } catch (const UsageError& e) {
    std::cerr << "ddp3d: " << e.what() << "\n" << usage << "\n";
    return 2;
  } catch (const config::ConfigError& e) {
    ddp3d::log::error(std::string("config error:\n") + e.what());
    return 2;
  } catch (const engine::CorruptCheckpoint& e) {
    ddp3d::log::error(e.what());
    return 1;
  } catch (const std::exception& e) {
    const std::string what = e.what();
    if (dist::is_peer_loss_error(what)) {
      // A peer died under a collective (its process was killed, its node lost): the same
      // outcome as a heartbeat that found it gone.
      ddp3d::log::error("a peer was lost: " + what.substr(0, what.find('\n')) +
                        "; stopping with exit code " + std::to_string(exit_code::kPeerLost));
      return exit_code::kPeerLost;
    }
    ddp3d::log::error(what);
    return 1;
  }
}

}  // namespace

int run_train(int argc, char** argv) {
  return guarded(kTrainUsage, [&] {
    const TrainArgs args = parse_train_args(rest(argc, argv));
    // Config first: a bad one fails here, before any rank waits on a rendezvous.
    const config::Config cfg = config::load(args.config, train_overrides(args));
    engine::RunnerOptions options = engine::runner_options_from_config(cfg);
    if (args.resume) options.resume = *args.resume;
    process::check_component_types(cfg);
    // Every rank's first line says where it runs; CUDA-only options on CPU fail here.
    const engine::DevicePlan plan = process::plan_session_device(cfg, args.launcher, "train");
    // An explicit checkpoint that is missing or corrupt fails before the process group too, on
    // rank 0: only rank 0 reads it (and sends it to the others, collective_resume.h).
    const bool rank0 = args.launcher != "pytorch" || dist::dist_env_from_environment().rank == 0;
    if (rank0 && !options.resume.empty() && options.resume != "auto")
      engine::read_checkpoint_file(options.resume);

    // Before the rendezvous: a port that cannot be bound fails this rank at once, not after
    // the others joined.
    std::unique_ptr<telemetry::WorkerMetrics> metrics = start_worker_metrics(cfg, args.launcher);
    std::unique_ptr<process::Session> session =
        process::start_session(cfg, args.launcher, "train", plan);
    options.work_dir = session->work_dir;
    // Same initial weights on every rank (and rank 0's are broadcast anyway).
    torch::manual_seed(session->ctx.seed);
    std::shared_ptr<engine::Model> model = engine::model_registry().build(cfg.node("model"));
    std::shared_ptr<engine::Dataset> train_data =
        engine::dataset_registry().build(cfg.node("train_dataloader.dataset"));
    std::shared_ptr<engine::Dataset> val_data;
    std::shared_ptr<engine::Evaluator> val_evaluator;
    if (cfg.has("val_dataloader") && cfg.has("val_evaluator")) {
      val_data = engine::dataset_registry().build(cfg.node("val_dataloader.dataset"));
      val_evaluator = engine::evaluator_registry().build(cfg.node("val_evaluator"));
    }
    std::int64_t params = 0;
    for (const at::Tensor& p : model->parameters()) params += p.numel();
    session->log->info("model " + cfg.get<std::string>("model.type") + ": " +
                       std::to_string(params) + " parameters; train dataset " +
                       std::to_string(train_data->size()) + " samples");
    engine::Runner runner(options, session->ctx, model, train_data, val_data, val_evaluator,
                          *session->log);
    if (metrics) {
      runner.set_telemetry(&metrics->telemetry());
      metrics->set_ready(true);
    }
    engine::PendingSignal pending;
    const process::TerminationSignals signals(pending);
    runner.set_pending_signal(&pending);
    const engine::TrainOutcome outcome = runner.train();
    if (session->pg) session->pg->finish();  // the heartbeat leaves in order
    if (outcome == engine::TrainOutcome::kPreempted) {
      session->log->warning(
          "training stopped on a termination signal after a checkpoint; "
          "`--resume auto` continues it (exit code " +
          std::to_string(exit_code::kPreempted) + ")");
      return exit_code::kPreempted;
    }
    session->log->info("training finished");
    return 0;
  });
}

int run_test(int argc, char** argv) {
  return guarded(kTestUsage, [&] {
    const TestArgs args = parse_test_args(rest(argc, argv));
    std::vector<std::string> overrides = args.cfg_options;
    if (args.work_dir) overrides.push_back(work_dir_override(*args.work_dir));
    if (args.submission_dir) {
      overrides.push_back(
          string_override("test_evaluator.submission_prefix", *args.submission_dir));
    }
    const config::Config cfg = config::load(args.config, overrides);
    if (!cfg.has("test_dataloader") || !cfg.has("test_evaluator")) {
      throw config::ConfigError(cfg.file().string(), "test_dataloader",
                                "`ddp3d test` needs test_dataloader and test_evaluator");
    }
    process::check_component_types(cfg);
    const engine::DevicePlan plan = process::plan_session_device(cfg, args.launcher, "test");
    const std::string payload =
        engine::read_checkpoint_file(args.checkpoint);  // fail fast if corrupt
    std::shared_ptr<engine::Evaluator> evaluator =
        engine::evaluator_registry().build(cfg.node("test_evaluator"));
    std::optional<engine::DrawOptions> draw;
    if (args.show_dir) {
      if (!evaluator->can_draw()) {
        throw config::ConfigError(cfg.file().string(), "test_evaluator.type",
                                  "--show-dir: this evaluator draws no pictures");
      }
      draw = engine::DrawOptions{*args.show_dir, args.show_count, args.show_score_thr};
      prepare_output_dir("--show-dir", draw->dir);  // before any process group
    }
    if (args.submission_dir) prepare_output_dir("--submission-dir", *args.submission_dir);

    std::unique_ptr<process::Session> session =
        process::start_session(cfg, args.launcher, "test", plan);
    std::shared_ptr<engine::Model> model = engine::model_registry().build(cfg.node("model"));
    engine::deserialize_checkpoint(payload, args.checkpoint, *model, nullptr, nullptr);
    model->to(session->ctx.device);
    std::shared_ptr<engine::Dataset> data =
        engine::dataset_registry().build(cfg.node("test_dataloader.dataset"));
    engine::LoaderSpec loader;
    loader.section = "test_dataloader";
    loader.batch_size = cfg.get<std::int64_t>("test_dataloader.batch_size");
    loader.num_workers = cfg.get<int>("test_dataloader.num_workers");
    const auto start = std::chrono::steady_clock::now();
    const engine::MetricMap metrics = engine::eval_loop_registry()
                                          .build(cfg.node("test_cfg"))
                                          ->run(engine::EvalPass{.model = *model,
                                                                 .dataset = *data,
                                                                 .loader = loader,
                                                                 .evaluator = *evaluator,
                                                                 .ctx = session->ctx,
                                                                 .draw = draw ? &*draw : nullptr});
    engine::RunSummary summary;
    summary.mode = "test";
    summary.wall_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    summary.samples = data->size();
    summary.metrics = metrics;
    if (draw) session->log->info("pictures of the predictions in " + draw->dir.string());
    const std::int64_t per_rank =
        (data->size() + session->ctx.world_size - 1) / session->ctx.world_size;
    session->log->metrics("test", 0, (per_rank + loader.batch_size - 1) / loader.batch_size, 0,
                          metrics);
    if (session->ctx.rank == 0) {
      const std::filesystem::path out = session->work_dir / "test_metrics.json";
      io::write_file_atomically(out, engine::format_test_metrics_json(
                                         args.config, args.checkpoint, session->ctx.world_size,
                                         data->size(), summary.wall_seconds, metrics));
      for (const std::string& line : engine::format_run_summary(summary)) session->log->info(line);
      session->log->info("wrote " + out.string());
    }
    if (session->pg) session->pg->finish();  // the heartbeat leaves in order
    return 0;
  });
}

}  // namespace ddp3d::cli
