// The framework around a reconciler, as controller-runtime's Controller is around its
// Reconciler: workers take keys from the queue (one key is never processed by two workers at
// once), reconcile them, and requeue: after an error with per-key backoff, after the delay the
// reconciler asked for otherwise. Every pass is counted and timed. Knows nothing of jobs.
#pragma once

#include <chrono>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "operator/kube/work_queue.h"
#include "operator/runtime/operator_metrics.h"

namespace ddp3d::op::runtime {

struct ReconcileOutcome {
  // Reconcile the key again after this long even without an event (deadlines, TTLs, waits).
  std::optional<std::chrono::milliseconds> requeue_after;
  // The pass failed: the key is retried with backoff (and after requeue_after, if set).
  std::exception_ptr error;
};

class WorkLoop {
 public:
  // Throwing from `reconcile` is the same as returning the exception as `error`.
  using Reconcile = std::function<ReconcileOutcome(const std::string& key)>;

  WorkLoop(kube::WorkQueue& queue, OperatorMetrics& metrics, Reconcile reconcile);
  ~WorkLoop();  // stop(true)
  WorkLoop(const WorkLoop&) = delete;
  WorkLoop& operator=(const WorkLoop&) = delete;

  void start(int workers);
  // With `drain`, the workers first finish the keys already queued; without it they stop after
  // their current key. Idempotent.
  void stop(bool drain);

 private:
  void worker();

  kube::WorkQueue& queue_;
  OperatorMetrics& metrics_;
  Reconcile reconcile_;
  std::vector<std::jthread> workers_;
  bool started_ = false;
  bool stopped_ = false;
};

}  // namespace ddp3d::op::runtime
