// ddp3d-operator: watches TrainingJobs and reconciles their Services and pods.
//
// main parses the flags (op::parse_operator_options, the one place they are parsed), builds
// the parts and hands them to a runtime::Manager, which owns the lifecycle: serve /metrics,
// /healthz, /readyz -> sync the caches -> (with --leader-elect, wait for the Lease) -> run
// the workers -> on SIGTERM or SIGINT drain the queue, release the Lease, stop the watches
// and servers, join every thread and exit 0. A drain still going after --shutdown-grace-seconds
// (a hung API server or exec credential plugin) is cut short: the client is aborted, so
// requests in flight fail and a running plugin is killed, and the stop order goes on. Losing
// the Lease exits 1 at once so the process restarts clean and campaigns again, as client-go
// controllers do.
#include <malloc.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

#include "common/http/metrics_server.h"
#include "common/http/server.h"
#include "common/log.h"
#include "common/metrics/collection.h"
#include "common/metrics/process_collector.h"
#include "operator/cli/operator_options.h"
#include "operator/kube/config.h"
#include "operator/kube/leader_elector.h"
#include "operator/runtime/controller_runnables.h"
#include "operator/runtime/job_controller.h"
#include "operator/runtime/kube_election.h"
#include "operator/runtime/library_threads.h"
#include "operator/runtime/manager.h"
#include "operator/runtime/operator_metrics.h"
#include "operator/runtime/server_runnable.h"
#include "operator/runtime/signal_stop.h"
#include "operator/runtime/thread_census.h"

namespace {

using namespace ddp3d;
namespace rt = op::runtime;

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

std::string scope_text(const std::vector<std::string>& namespaces) {
  if (namespaces.empty()) return "all namespaces";
  std::string s;
  for (const auto& ns : namespaces) s += (s.empty() ? "" : ",") + ns;
  return "namespaces " + s;
}

http::ServerOptions server_options(const op::ListenAddress& listen) {
  http::ServerOptions so;
  so.address = listen.host;
  so.port = listen.port;
  return so;
}

int run(const op::OperatorOptions& opts, const sigset_t& signals) {
  rt::SignalStop signal_stop(signals);
  kube::Config config;
  try {
    config = kube::load_default_config(opts.kubeconfig);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ddp3d-operator: %s\n", e.what());
    return 2;
  }
  log::info("API server " + config.server + " (" + config.origin + ")");
  // A bad CA or client key in the config is reported here, as a usage error, not an abort.
  std::unique_ptr<kube::Client> client_holder;
  try {
    client_holder = std::make_unique<kube::Client>(config);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ddp3d-operator: %s\n", e.what());
    return 2;
  }
  kube::Client& client = *client_holder;

  metrics::Collection exposed;
  exposed.add(std::make_shared<metrics::ProcessCollector>());
  op::OperatorMetrics operator_metrics(exposed);

  const std::string identity = env_or("POD_NAME", kube::default_identity());
  op::ControllerConfig cc;
  cc.namespaces = opts.namespaces;
  cc.workers = opts.workers;
  cc.resync = std::chrono::seconds(opts.resync_seconds);
  cc.template_policy = opts.template_policy;
  cc.progress_probe_interval = std::chrono::seconds(opts.progress_probe_seconds);
  cc.watch_nodes = opts.watch_nodes;
  cc.kueue = opts.kueue;
  cc.progress_probe_timeout = std::chrono::milliseconds(opts.progress_probe_timeout_ms);
  cc.identity = identity;
  cc.operator_namespace = env_or("POD_NAMESPACE", "");
  log::info("watching " + scope_text(opts.namespaces));
  op::JobController controller(client, cc, operator_metrics);
  operator_metrics.set_sources([&] { return controller.jobs_by_phase(); },
                               [&] { return static_cast<double>(controller.queue_depth()); });

  // Declared before the servers: their handlers ask it for readiness.
  rt::Manager manager;
  std::optional<http::MetricsServer> metrics_server;
  std::optional<http::Server> health_server;
  if (opts.metrics.enabled) {
    metrics_server.emplace(exposed, server_options(opts.metrics));
    metrics_server->set_readiness([&] { return manager.ready(); });
    manager.add(rt::Stage::kServers,
                std::make_unique<rt::ServerRunnable>("metrics server", metrics_server->server()));
  }
  if (opts.health.enabled) {
    health_server.emplace(server_options(opts.health));
    health_server->handle("/healthz", [](const http::Request&) {
      return http::Response{200, "text/plain; charset=utf-8", "ok\n"};
    });
    health_server->handle("/readyz", [&](const http::Request&) {
      return manager.ready() ? http::Response{200, "text/plain; charset=utf-8", "ready\n"}
                             : http::Response{503, "text/plain; charset=utf-8", "not ready\n"};
    });
    manager.add(rt::Stage::kServers,
                std::make_unique<rt::ServerRunnable>("health server", *health_server));
  }
  manager.add(rt::Stage::kCaches, std::make_unique<rt::ControllerInformers>(controller));
  manager.add(rt::Stage::kLeaderOnly,
              std::make_unique<rt::ControllerWorkers>(controller, operator_metrics, client));

  if (opts.leader_elect) {
    kube::LeaderElectionConfig le;
    le.lease_namespace = opts.leader_election_namespace.empty() ? env_or("POD_NAMESPACE", "default")
                                                                : opts.leader_election_namespace;
    le.lease_name = opts.leader_election_id;
    le.identity = identity;
    le.on_new_leader = [](const std::string& id) { log::info("leader is now " + id); };
    log::info("will campaign for Lease " + le.lease_namespace + "/" + le.lease_name + " as " +
              identity);
    manager.set_election(std::make_unique<rt::KubeElection>(config, std::move(le)));
  }

  manager.set_shutdown_grace(std::chrono::seconds(opts.shutdown_grace_seconds));
  manager.add_shutdown_cut([&client](const std::string& why) { client.abort(why); });

  const rt::RunResult result = manager.run(signal_stop.token());
  switch (result.outcome) {
    case rt::RunResult::Outcome::kStopped:
      return 0;
    case rt::RunResult::Outcome::kStartFailed:
      std::fprintf(stderr, "ddp3d-operator: %s\n", result.error.c_str());
      // A server that cannot bind is a usage problem (2); anything later is a runtime one.
      return result.failed_stage == rt::Stage::kServers ? 2 : 1;
    case rt::RunResult::Outcome::kLeadershipLost:
      return 1;
  }
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace ddp3d;
#ifdef __GLIBC__
  // glibc gives each thread that allocates its own arena; the operator's threads (informers,
  // workers, the cpprest pool, slow-start helpers) each kept freed pages of their own. Two
  // arenas: 200 jobs in 25 MiB instead of 32, the same CPU (benchmarks/operator/run).
  mallopt(M_ARENA_MAX, 2);
#endif
  op::OperatorOptions opts;
  try {
    opts = op::parse_operator_options(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const op::UsageError& e) {
    std::fprintf(stderr, "ddp3d-operator: %s\n\n%s", e.what(), op::operator_usage().c_str());
    return 2;
  }
  if (opts.help) {
    std::fputs(op::operator_usage().c_str(), stdout);
    return 0;
  }
  // Before any thread exists, so that every thread inherits the mask.
  const sigset_t signals = rt::block_stop_signals();
  log::set_prefix("operator");
  // Library threads that live until static destruction are started first, so the count below
  // includes them; whatever run() starts must be gone by the time it returns.
  rt::start_library_threads();
  const std::size_t threads_before = rt::live_threads();
  log::info(std::to_string(threads_before) + " threads before starting");
  int code = 1;
  try {
    code = run(opts, signals);
  } catch (const std::exception& e) {
    // Every part is destroyed (and its threads joined) by the time this runs.
    log::error(std::string("ddp3d-operator: ") + e.what());
  }
  const std::size_t threads_after =
      rt::wait_for_threads_at_most(threads_before, std::chrono::seconds(2));
  if (threads_after > threads_before) {
    log::error(std::to_string(threads_after - threads_before) +
               " thread(s) still running after shutdown");
    return 1;
  }
  log::info("stopped; every thread joined (" + std::to_string(threads_after) +
            " left: main and the libraries' own)");
  return code;
}
