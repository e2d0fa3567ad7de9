// What the controller needs to know about the pods and Services that exist for a job, read from
// the API objects the informers cache. Kept small so reconcile tests can write them directly.
#pragma once

#include <cpprest/json.h>

#include <cstdint>
#include <optional>
#include <string>

namespace ddp3d::op::controller {

struct ObservedPod {
  std::string name;
  std::string uid;
  int rank = -1;                 // ddp3d.io/node-rank, -1 when missing or not a number
  int attempt = -1;              // ddp3d.io/attempt, -1 when missing or not a number
  std::string phase;             // status.phase: Pending | Running | Succeeded | Failed | Unknown
  std::optional<int> exit_code;  // of the first terminated container (non-zero preferred)
  std::string reason;            // pod reason (Evicted, ...) or the container's (OOMKilled, Error)
  std::optional<int64_t> finished_at;  // that container's finishedAt (Unix seconds), if given
  bool deleting = false;               // deletionTimestamp set
  // --- disruptions (issue 10, point 3) ---
  std::string pod_reason;  // status.reason alone (Evicted, NodeLost, Shutdown, ...)
  // Reason of the pod's DisruptionTarget condition when it is True (EvictionByEvictionAPI,
  // PreemptionByScheduler, DeletionByTaintManager, DeletionByPodGC, TerminationByKubelet):
  // Kubernetes is about to stop the pod for reasons of its own, not the program's.
  std::string disruption_target;
};

struct ObservedService {
  std::string name;
  std::string uid;
};

ObservedPod observe_pod(const web::json::value& pod);
ObservedService observe_service(const web::json::value& service);

}  // namespace ddp3d::op::controller
