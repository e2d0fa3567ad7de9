// What the controller needs to know about the pods and Services that exist for a job, read from
// the API objects the informers cache. Kept small so reconcile tests can write them directly.
#pragma once

#include <cpprest/json.h>

#include <cstdint>
#include <optional>
#include <string>

#include "operator/api/timestamps.h"
#include "operator/controller/progress_metrics.h"

namespace ddp3d::op::controller {

// One scrape of a rank's /metrics by the progress probe (probe/progress_probe.h).
struct ProgressScrape {
  api::UnixSeconds time = 0;
  std::string error;  // "" when the endpoint answered 200 (connection refused, HTTP 404, ...)
  ProgressMetrics metrics;
  bool operator==(const ProgressScrape&) const = default;
};

struct ObservedPod {
  std::string name;
  std::string uid;
  int rank = -1;                 // ddp3d.io/node-rank, -1 when missing or not a number
  int attempt = -1;              // ddp3d.io/attempt, -1 when missing or not a number
  bool grow_probe = false;       // ddp3d.io/role=grow-probe: holds room, runs no rank
  std::string phase;             // status.phase: Pending | Running | Succeeded | Failed | Unknown
  std::optional<int> exit_code;  // of the first terminated container (non-zero preferred)
  std::string reason;            // pod reason (Evicted, ...) or the container's (OOMKilled, Error)
  std::optional<int64_t> finished_at;  // that container's finishedAt (Unix seconds), if given
  bool deleting = false;               // deletionTimestamp set
  // --- disruptions ---
  std::string pod_reason;  // status.reason alone (Evicted, NodeLost, Shutdown, ...)
  // Reason of the pod's DisruptionTarget condition when it is True (EvictionByEvictionAPI,
  // PreemptionByScheduler, DeletionByTaintManager, DeletionByPodGC, TerminationByKubelet):
  // Kubernetes is about to stop the pod for reasons of its own, not the program's.
  std::string disruption_target;
  // --- progress and startup ---
  std::string pod_ip;     // status.podIP
  std::string node_name;  // spec.nodeName
  // Why the pod cannot start: the reason and message of the first container (init containers
  // first) waiting with a reason other than ContainerCreating/PodInitializing.
  std::string waiting_reason;
  std::string waiting_message;
  // The PodScheduled=False condition's reason (Unschedulable, SchedulingGated) and message.
  std::string unschedulable_reason;
  std::string unschedulable_message;
  // The probe's latest scrape of this pod (matched by uid); set by the controller, not parsed.
  std::optional<ProgressScrape> scrape;
};

// A node that one of a job's pods was scheduled to, as the Node informer last saw it.
struct ObservedNode {
  std::string name;
  std::string ready;   // the Ready condition's status: "True" | "False" | "Unknown" | "" (none)
  std::string reason;  // its reason (NodeStatusUnknown, KubeletNotReady, ...)
  // Its lastTransitionTime: since when the node has been in that state.
  std::optional<api::UnixSeconds> ready_since;
  // The informer saw the Node deleted (and not registered again since).
  bool deleted = false;
  bool operator==(const ObservedNode&) const = default;
};

// An owned object of which only its identity matters (the job's Service, NetworkPolicy).
struct ObservedObject {
  std::string name;
  std::string uid;
};

ObservedPod observe_pod(const web::json::value& pod);
ObservedObject observe_object(const web::json::value& object);
ObservedNode observe_node(const web::json::value& node);

}  // namespace ddp3d::op::controller
