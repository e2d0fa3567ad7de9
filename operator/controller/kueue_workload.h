// Kueue's side of a TrainingJob, for jobs labelled kueue.x-k8s.io/queue-name. Kueue does not
// reconcile TrainingJobs itself (the kind is one of its integrations.externalFrameworks, so
// it leaves the pods alone); the operator speaks its protocol as Kueue's own job integrations
// do (pkg/controller/jobframework): one Workload per job, owned by it, with one pod set of the
// job's pods; no pod before the Workload is admitted; after an eviction, the pods stopped
// and then the admission released. Pure: parsing and building JSON, no I/O.
#pragma once

#include <cpprest/json.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "operator/api/timestamps.h"
#include "operator/api/training_job.h"

namespace ddp3d::op::controller::kueue {

inline constexpr const char* kApiVersion = "kueue.x-k8s.io/v1beta2";
inline constexpr const char* kQueueNameLabel = "kueue.x-k8s.io/queue-name";
inline constexpr const char* kJobUidLabel = "kueue.x-k8s.io/job-uid";
// Kueue keeps quota for a Workload with this finalizer until the job's controller removes it.
inline constexpr const char* kResourceInUseFinalizer = "kueue.x-k8s.io/resource-in-use";
inline constexpr const char* kPodSetName = "ranks";

// The job's queue (its kueue.x-k8s.io/queue-name label), if it has one.
std::optional<std::string> queue_name(const api::TrainingJob& job);

// The job's Workload: owned by the job (controller reference; Kueue finds a job's Workload by
// it), finalizer kResourceInUseFinalizer, labels job-name and kJobUidLabel, spec.queueName,
// one pod set `kPodSetName` of the job's nnodes pods with the ranks' pod template (what Kueue
// counts against quota: the containers' requests) and, for an elastic job, minCount =
// minNodes so Kueue may admit it smaller (partial admission). `priority`: the value of the
// template's priorityClassName, which Kueue requires together with the class.
web::json::value desired_workload(const api::TrainingJob& job, const std::string& queue,
                                  std::optional<int32_t> priority);

// What the controller reads of the job's Workload.
struct ObservedWorkload {
  std::string name;
  std::string uid;
  std::string resource_version;
  bool deleting = false;       // deletionTimestamp set
  bool has_finalizer = false;  // kResourceInUseFinalizer
  std::string queue_name;      // spec.queueName
  int pod_count = 0;           // spec.podSets[0].count
  // QuotaReserved and Admitted are True, with status.admission set.
  bool admitted = false;
  bool has_admission = false;                  // status.admission is set (quota held)
  std::optional<int> admitted_count;           // status.admission.podSetAssignments[0].count
  std::map<std::string, std::string> flavors;  // resource -> ResourceFlavor of the admission
  std::string cluster_queue;                   // status.admission.clusterQueue
  // While not admitted: QuotaReserved's reason and message (why it waits: "Pending", ...).
  std::string pending_reason;
  std::string pending_message;
  // Evicted=True: Preempted, PodsReadyTimeout, ClusterQueueStopped, Deactivated, ...
  bool evicted = false;
  std::string evicted_reason;
  std::string evicted_message;
  bool finished = false;          // Finished=True
  std::string pods_ready_reason;  // the PodsReady condition's reason, "" when absent
  web::json::value object;        // as read: the base of status writes
};

ObservedWorkload observe_workload(const web::json::value& workload);

// Where a ResourceFlavor puts what it admits: its spec.nodeLabels and spec.tolerations.
struct FlavorPlacement {
  std::map<std::string, std::string> node_labels;
  web::json::value tolerations = web::json::value::array();
};

FlavorPlacement observe_flavor(const web::json::value& flavor);

// The Workload's finalizers without kResourceInUseFinalizer: what is left once the job lets go.
web::json::value finalizers_without_ours(const ObservedWorkload& workload);

// `pod` (a desired pod) with the admitted flavors' node labels added to its nodeSelector and
// their tolerations to its tolerations, as Kueue's jobframework does on admission. A flavor
// missing from `known` adds nothing.
void apply_flavors(web::json::value& pod, const ObservedWorkload& admitted,
                   const std::map<std::string, FlavorPlacement>& known);

// The Workload's status after the job released its quota following an eviction, as Kueue's
// jobframework writes it (UnsetQuotaReservationWithCondition): status.admission removed,
// QuotaReserved=False/Pending, Admitted=False/NoReservation, and Requeued True when the
// eviction was a preemption or node failure (Kueue requeues those itself) or False with the
// eviction's reason. `workload` is the object as read; the result is its whole new status.
web::json::value released_status(const web::json::value& workload, api::UnixSeconds now);

// The Workload's status with condition `type` set (lastTransitionTime moves only when the
// status changes), for PodsReady and Finished.
web::json::value status_with_condition(const web::json::value& workload, const std::string& type,
                                       bool status, const std::string& reason,
                                       const std::string& message, api::UnixSeconds now);

}  // namespace ddp3d::op::controller::kueue
