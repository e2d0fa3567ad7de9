#include "operator/runtime/work_loop.h"

#include "common/log.h"

namespace ddp3d::op::runtime {

WorkLoop::WorkLoop(kube::WorkQueue& queue, OperatorMetrics& metrics, Reconcile reconcile)
    : queue_(queue), metrics_(metrics), reconcile_(std::move(reconcile)) {}

WorkLoop::~WorkLoop() {
  stop(true);
}

void WorkLoop::start(int workers) {
  if (started_) return;
  started_ = true;
  log::info("starting " + std::to_string(workers) + " workers");
  for (int i = 0; i < workers; ++i) workers_.emplace_back([this] { worker(); });
}

void WorkLoop::stop(bool drain) {
  if (stopped_) return;
  stopped_ = true;
  if (drain) {
    queue_.shut_down();
  } else {
    queue_.shut_down_now();
  }
  workers_.clear();  // joins
}

void WorkLoop::worker() {
  while (auto key = queue_.get()) {
    const auto t0 = std::chrono::steady_clock::now();
    ReconcileOutcome outcome;
    try {
      outcome = reconcile_(*key);
    } catch (...) {
      outcome.error = std::current_exception();
    }
    if (outcome.requeue_after) queue_.add_after(*key, *outcome.requeue_after);
    if (outcome.error) {
      metrics_.reconcile("error").Increment();
      std::string what = "unknown error";
      try {
        std::rethrow_exception(outcome.error);
      } catch (const std::exception& e) {
        what = e.what();
      } catch (...) {
      }
      log::warning("reconcile " + *key + " failed (will retry): " + what);
      queue_.add_rate_limited(*key);
    } else {
      queue_.forget(*key);
      metrics_.reconcile("success").Increment();
    }
    metrics_.reconcile_duration_seconds.Observe(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    queue_.done(*key);
  }
}

}  // namespace ddp3d::op::runtime
