// What reconcile asks the API client to do, one type per kind of request. Applying them is
// the caller's job (I/O, operator/act/); every action is idempotent so replaying it after a
// crash or a lost response is harmless.
#pragma once

#include <cpprest/json.h>

#include <string>
#include <variant>

namespace ddp3d::op::controller {

// Creates of objects the job owns; the name is the object's metadata.name. AlreadyExists counts
// as success: names are deterministic, so it exists because an earlier pass created it.
struct CreateService {
  web::json::value object;
};
struct CreateNetworkPolicy {
  web::json::value object;
};
// An attempt's Secret without its token, which the caller adds (randomness is I/O).
struct CreateRendezvousSecret {
  web::json::value object;
};
// An attempt's PodGroup, at the apiVersion the cluster serves (object.apiVersion).
struct CreatePodGroup {
  web::json::value object;
};
struct CreatePod {
  web::json::value object;
};

// The job's Kueue Workload (controller/kueue_workload.h).
struct CreateWorkload {
  web::json::value object;
};
// PUT of the Workload's status subresource: `object` is the Workload as read (its
// resourceVersion is the precondition) with the new status.
struct UpdateWorkloadStatus {
  web::json::value object;
  std::string why;  // for the log: "release", "PodsReady", "Finished"
};
// The job no longer holds the Workload's quota: its finalizer goes (a merge patch with the
// resourceVersion as precondition, keeping any other finalizer).
struct RemoveWorkloadFinalizer {
  std::string name;
  std::string resource_version;
  web::json::value remaining_finalizers = web::json::value::array();
};

// Deletes with the uid as precondition, so a newer object of that name survives.
struct DeletePod {
  std::string name;
  std::string uid;
  // gracePeriodSeconds 0: the pod's node is lost and no kubelet will confirm the deletion.
  bool force = false;
};
struct DeleteJob {  // ttlSecondsAfterFinished expired
  std::string name;
  std::string uid;
};

// An Event about the TrainingJob (best effort).
struct RecordEvent {
  std::string type;  // Normal | Warning
  std::string reason;
  std::string message;
};

using Action = std::variant<CreateService, CreateNetworkPolicy, CreateRendezvousSecret,
                            CreatePodGroup, CreatePod, CreateWorkload, UpdateWorkloadStatus,
                            RemoveWorkloadFinalizer, DeletePod, DeleteJob, RecordEvent>;

// The kind as logs and the actions_total metric name it ("CreatePod").
const char* kind_of(const Action& action);
// The object the action is about: the created or deleted object's name; an Event's reason.
std::string target_of(const Action& action);

}  // namespace ddp3d::op::controller
