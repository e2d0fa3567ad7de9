// The JobController's two halves as Manager runnables: its informers (a cache stage, so a
// standby replica keeps warm caches) and its workers (leader-only).
#pragma once

#include "operator/kube/client.h"
#include "operator/runtime/job_controller.h"
#include "operator/runtime/operator_metrics.h"
#include "operator/runtime/runnable.h"

namespace ddp3d::op::runtime {

class ControllerInformers : public Runnable {
 public:
  explicit ControllerInformers(JobController& controller) : controller_(controller) {}
  std::string name() const override { return "informers"; }
  // Starts the watches and waits for their first list (JobController::wait_for_sync).
  void start(const std::stop_token& stop) override;
  void stop(StopMode mode) noexcept override;

 private:
  JobController& controller_;
};

class ControllerWorkers : public Runnable {
 public:
  // `client` is the one the controller's requests go through.
  ControllerWorkers(JobController& controller, OperatorMetrics& metrics, kube::Client& client)
      : controller_(controller), metrics_(metrics), client_(client) {}
  std::string name() const override { return "workers"; }
  void start(const std::stop_token& stop) override;
  // kDrain finishes the queued keys. kAbandon (the Lease was lost) first aborts the client,
  // so that a reconcile stuck in a stalled request neither holds the stop for the request
  // timeout nor lands a write after a successor took over; then stops after the current key.
  void stop(StopMode mode) noexcept override;

 private:
  JobController& controller_;
  OperatorMetrics& metrics_;
  kube::Client& client_;
};

}  // namespace ddp3d::op::runtime
