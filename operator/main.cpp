// ddp3d-operator: watches TrainingJobs and reconciles their Services and pods.
//
// Lifecycle: parse flags -> load the kube config -> serve /metrics, /healthz, /readyz ->
// (with --leader-elect, wait for the Lease) -> sync caches and run workers -> on SIGTERM or
// SIGINT drain the queue, release the Lease and exit 0. Losing the Lease exits 1 at once so
// the process restarts clean and campaigns again, as client-go controllers do.
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <thread>

#include "common/http/metrics_server.h"
#include "common/http/server.h"
#include "common/log.h"
#include "common/metrics/process_collector.h"
#include "common/metrics/registry.h"
#include "operator/controller/job_controller.h"
#include "operator/controller/operator_metrics.h"
#include "operator/controller/operator_options.h"
#include "operator/kube/config.h"
#include "operator/kube/errors.h"
#include "operator/kube/leader_elector.h"

namespace {

using namespace ddp3d;

// Shared between the signal thread, the elector's callbacks and main.
struct State {
  std::mutex mu;
  std::condition_variable cv;
  bool stop = false;     // SIGTERM/SIGINT
  bool leading = false;  // on_started_leading seen
  bool lost = false;     // leadership lost while not stopping
  bool elector_done = false;
  std::atomic<bool> ready{false};

  template <class Pred>
  void wait(Pred pred) {
    std::unique_lock lock(mu);
    cv.wait(lock, pred);
  }
  template <class Pred>
  bool wait_for(std::chrono::milliseconds timeout, Pred pred) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, timeout, pred);
  }
  void update(const std::function<void()>& f) {
    {
      std::lock_guard lock(mu);
      f();
    }
    cv.notify_all();
  }
};

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

int run(const op::OperatorOptions& opts, const sigset_t& signals) {
  State state;
  // A dedicated thread turns blocked signals into a stop request.
  std::jthread signal_thread([&](const std::stop_token& st) {
    const timespec tick{0, 200'000'000};
    while (!st.stop_requested()) {
      const int sig = sigtimedwait(&signals, nullptr, &tick);
      if (sig > 0) {
        log::info(std::string("received ") + (sig == SIGTERM ? "SIGTERM" : "SIGINT") +
                  "; shutting down");
        state.update([&] { state.stop = true; });
        return;
      }
    }
  });

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

  metrics::Registry registry;
  metrics::register_process_collector(registry);
  op::OperatorMetrics operator_metrics(registry);

  std::unique_ptr<http::MetricsServer> metrics_server;
  std::unique_ptr<http::Server> health_server;
  try {
    if (opts.metrics.enabled) {
      http::ServerOptions so;
      so.address = opts.metrics.host;
      so.port = opts.metrics.port;
      metrics_server = std::make_unique<http::MetricsServer>(registry, so);
      metrics_server->set_readiness([&] { return state.ready.load(); });
      metrics_server->start();
      log::info("metrics on " + opts.metrics.host + ":" + std::to_string(metrics_server->port()));
    }
    if (opts.health.enabled) {
      http::ServerOptions so;
      so.address = opts.health.host;
      so.port = opts.health.port;
      health_server = std::make_unique<http::Server>(so);
      health_server->handle("/healthz", [](const http::Request&) {
        return http::Response{200, "text/plain; charset=utf-8", "ok\n"};
      });
      health_server->handle("/readyz", [&](const http::Request&) {
        return state.ready.load() ? http::Response{200, "text/plain; charset=utf-8", "ready\n"}
                                  : http::Response{503, "text/plain; charset=utf-8", "not ready\n"};
      });
      health_server->start();
      log::info("health on " + opts.health.host + ":" + std::to_string(health_server->port()));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ddp3d-operator: %s\n", e.what());
    return 2;
  }

  const std::string identity = env_or("POD_NAME", kube::default_identity());
  op::ControllerConfig cc;
  cc.namespaces = opts.namespaces;
  cc.workers = opts.workers;
  cc.resync = std::chrono::seconds(opts.resync_seconds);
  cc.identity = identity;
  log::info("watching " + (opts.namespaces.empty() ? std::string("all namespaces") : [&] {
              std::string s;
              for (const auto& ns : opts.namespaces) s += (s.empty() ? "" : ",") + ns;
              return "namespaces " + s;
            }()));

  std::unique_ptr<op::JobController> controller;
  int exit_code = 0;
  auto start_controller = [&]() -> bool {
    controller = std::make_unique<op::JobController>(client, cc, operator_metrics);
    op::JobController* c = controller.get();
    operator_metrics.set_sources([c] { return c->jobs_by_phase(); },
                                 [c] { return static_cast<double>(c->queue_depth()); });
    try {
      controller->start();
    } catch (const std::exception& e) {
      log::error(e.what());
      exit_code = 1;
      return false;
    }
    operator_metrics.is_leader.set(1);
    state.ready = true;
    return true;
  };

  std::unique_ptr<kube::LeaderElector> elector;
  std::jthread elector_thread;
  if (!opts.leader_elect) {
    if (start_controller()) state.wait([&] { return state.stop; });
  } else {
    kube::LeaderElectionConfig le;
    le.lease_namespace = opts.leader_election_namespace.empty() ? env_or("POD_NAMESPACE", "default")
                                                                : opts.leader_election_namespace;
    le.lease_name = opts.leader_election_id;
    le.identity = identity;
    le.on_started_leading = [&] { state.update([&] { state.leading = true; }); };
    le.on_stopped_leading = [&] {
      state.update([&] {
        if (!state.stop) state.lost = true;
      });
    };
    le.on_new_leader = [](const std::string& id) { log::info("leader is now " + id); };
    elector = std::make_unique<kube::LeaderElector>(client, le);
    // A standby replica is healthy and ready: it is doing its job, which is to wait.
    state.ready = true;
    log::info("campaigning for Lease " + le.lease_namespace + "/" + le.lease_name + " as " +
              identity);
    elector_thread = std::jthread([&](const std::stop_token& st) {
      elector->run(st);
      state.update([&] { state.elector_done = true; });
    });
    state.wait([&] { return state.leading || state.stop || state.elector_done; });
    if (state.leading && !state.stop) {
      state.ready = false;
      if (start_controller()) state.wait([&] { return state.stop || state.lost; });
    }
    if (state.lost) {
      log::error(
          "lost the leader Lease; stopping at once so this process cannot act "
          "alongside the new leader");
      exit_code = 1;
    }
  }

  // Shutdown: stop reconciling before the Lease is released, so a successor never overlaps.
  state.ready = false;
  if (controller) {
    controller->stop_workers(/*drain=*/!state.lost);
    operator_metrics.is_leader.set(0);
  }
  if (elector_thread.joinable()) {
    elector_thread.request_stop();
    // Releasing the Lease lets a successor start at once; if the API server does not answer
    // in time, exit anyway: the Lease then expires by itself after its duration.
    if (state.wait_for(std::chrono::seconds(10), [&] { return state.elector_done; })) {
      elector_thread.join();
    } else {
      log::warning(
          "leader election did not stop within 10s; exiting without releasing the "
          "Lease (it expires by itself)");
    }
  }
  signal_thread.request_stop();
  if (metrics_server) metrics_server->stop();
  if (health_server) health_server->stop();
  log::info("stopped");
  // The informers' watch threads may sit in a blocking read until their stream next
  // delivers data; nothing is left to do with them, so the process ends here instead of
  // joining them (their sockets close with it).
  std::fflush(nullptr);
  std::_Exit(exit_code);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace ddp3d;
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
  // Block the stop signals in every thread (they inherit this mask); one thread waits for them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  log::set_prefix("operator");
  return run(opts, signals);
}
