// The TrainingJob controller: informers keep local caches of TrainingJobs and of the pods,
// Services and NetworkPolicies they own, a work loop (runtime/work_loop.h) serializes work per
// job ("namespace/name"), and each pass is observe (observe/job_observer.h, caches to
// controller::Observed) -> decide (the pure controller::reconcile()) -> act (act/: status
// first, through the status subresource and conflict-checked, then the actions). Writing status
// first means a crash between the two never loses a restart: the new attempt number is stored
// before any pod of the old attempt is deleted.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stop_token>
#include <string>
#include <vector>

#include "operator/act/action_applier.h"
#include "operator/api/template_policy_options.h"
#include "operator/api/training_job.h"
#include "operator/controller/expectations.h"
#include "operator/kube/client.h"
#include "operator/kube/informer.h"
#include "operator/kube/work_queue.h"
#include "operator/probe/progress_probe.h"
#include "operator/runtime/kueue_informers.h"
#include "operator/runtime/operator_metrics.h"
#include "operator/runtime/work_loop.h"

namespace ddp3d::op {

struct ControllerConfig {
  std::vector<std::string> namespaces;  // empty = all namespaces
  int workers = 4;
  std::chrono::seconds resync{300};
  std::string identity = "ddp3d-operator";  // reportingInstance of the events we record
  std::chrono::seconds sync_timeout{120};
  // How long a write in flight (pod/Service create or delete, status write) may stay unseen by
  // the informers before the controller stops waiting for it (controller/expectations.h).
  std::chrono::seconds expectations_timeout{60};
  api::TemplatePolicy template_policy;  // what spec.template may ask for (docs/security.md)
  // The progress probe (probe/progress_probe.h): how often every Running pod's /metrics
  // is read (0 disables it, and with it progressDeadlineSeconds' view of the steps) and how
  // long one read may take.
  std::chrono::seconds progress_probe_interval{15};
  std::chrono::milliseconds progress_probe_timeout{2000};
  // The operator's namespace ($POD_NAMESPACE): job NetworkPolicies admit metrics scrapes from
  // it, for the progress probe.
  std::string operator_namespace;
  // Watch Nodes (cluster-wide, read-only) so that pods on a node that stopped answering are
  // recognised as lost (runPolicy.nodeLossTimeoutSeconds); without it they never are.
  bool watch_nodes = true;
  // Speak Kueue's protocol for jobs labelled kueue.x-k8s.io/queue-name (runtime/
  // kueue_informers.h); without it such jobs wait as Queued.
  bool kueue = true;
};

class JobController {
 public:
  JobController(kube::Client& client, ControllerConfig config, OperatorMetrics& metrics);
  ~JobController();  // stop()
  JobController(const JobController&) = delete;
  JobController& operator=(const JobController&) = delete;

  // The lifecycle in steps, so the operator's Manager can start the informers before the
  // Lease is won (a standby keeps warm caches) and the workers only once it is:
  void start_informers();
  // Waits for every informer's first list. Returns false if `stop` came first; throws
  // std::runtime_error if the caches do not sync within config.sync_timeout (e.g. RBAC).
  bool wait_for_sync(const std::stop_token& stop);
  void start_workers();
  // Stops the workers. With `drain`, they first finish the keys already queued (graceful
  // shutdown while still leading); without it they stop after their current key (leadership
  // lost: another replica may be acting). Idempotent.
  void stop_workers(bool drain);
  // Cancels the watches and joins the informers' threads. Idempotent.
  void stop_informers();

  // All of the above in one call: start_informers(), wait_for_sync(), start_workers().
  void start();
  // stop_workers(true), then stop_informers().
  void stop();
  bool synced() const;

  std::map<std::string, double> jobs_by_phase() const;
  std::size_t queue_depth() const;

 private:
  struct Scope {
    std::string ns;  // "" = all namespaces
    std::unique_ptr<kube::Informer> jobs, pods, services, network_policies;
  };

  // One pass for one job: observe, decide, act. Throws on API errors (the key is then retried
  // with backoff).
  runtime::ReconcileOutcome reconcile(const std::string& key);
  // Metrics and the log line of a status change that was written.
  void record_status_change(const std::string& key, const api::TrainingJobStatus& before,
                            const api::TrainingJobStatus& after);
  const Scope& scope_for(const std::string& ns) const;
  // Informer events for a pod or Service: meet the expectations they answer, requeue the job.
  void on_child_event(const char* kind, const web::json::value& child, bool gone);
  // A Node's Ready condition changed, or it was deleted: requeue every job with a pod on it.
  void on_node_event(const web::json::value& node);
  // The informers in start/stop order (pods before jobs, so a job's first pass sees them).
  std::vector<kube::Informer*> informers() const;
  // The PodGroup API the cluster serves ("" for none), asked once (GET /apis/scheduling.k8s.io);
  // throws on a transient error, so the reconcile that asked is retried.
  std::string pod_group_api();
  // What the progress probe reads: the Running pods of every TrainingJob not finished or
  // suspended, at the job's spec.metricsPort.
  std::vector<probe::ProbeTarget> probe_targets() const;
  // Whether the Node informer saw `node` deleted (and not registered again since).
  bool node_deleted(const std::string& node);
  // A deleted job's Workloads that are being deleted keep the operator's finalizer until it
  // lets go of them (the job's reconcile cannot: the job is gone).
  void let_go_of_workloads(const std::string& ns, const std::string& name);

  kube::Client& client_;
  ControllerConfig config_;
  OperatorMetrics& metrics_;
  kube::WorkQueue queue_;
  std::vector<Scope> scopes_;
  std::unique_ptr<kube::Informer> nodes_;  // cluster-wide; null without config_.watch_nodes
  // Nodes the informer saw deleted (and not registered again since), bounded: a pod on one is
  // on a lost node; a node merely absent from the cache may be one not delivered yet.
  std::mutex deleted_nodes_mutex_;
  std::set<std::string> deleted_nodes_;
  // Writes this replica made that the informers may not have delivered yet: a reconcile never
  // acts on a status older than its own last write, nor on a view missing its own creates.
  controller::StatusExpectations written_status_;
  controller::ChildExpectations in_flight_;
  // Runs with the workers (leader only); null when disabled.
  std::unique_ptr<probe::ProgressProbe> probe_;
  // Kueue's Workloads and ResourceFlavors, for jobs labelled kueue.x-k8s.io/queue-name.
  std::unique_ptr<runtime::KueueInformers> kueue_;
  act::ActionApplier actions_;
  runtime::WorkLoop work_loop_;
  std::mutex discovery_mutex_;
  std::optional<std::string> pod_group_api_;
  bool informers_started_ = false;
  bool workers_started_ = false;
  bool informers_stopped_ = false;
};

}  // namespace ddp3d::op
