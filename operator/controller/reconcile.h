// The controller's core: a pure function from what the user asked for (the TrainingJob) and
// what exists (pods, Services, the time) to what should change (actions) and the status to
// write. No I/O, so every phase transition is tested without a server.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "operator/api/timestamps.h"
#include "operator/api/training_job.h"
#include "operator/controller/actions.h"
#include "operator/controller/kueue_workload.h"
#include "operator/controller/observed.h"

namespace ddp3d::op::controller {

// Kueue's view of a job labelled kueue.x-k8s.io/queue-name (controller/kueue_workload.h).
struct ObservedKueue {
  // The cluster serves Kueue's Workload API (kueue.x-k8s.io/v1beta2).
  bool served = false;
  bool disabled = false;                                  // the operator runs with --kueue=false
  std::optional<kueue::ObservedWorkload> workload;        // the job's, when it exists
  std::map<std::string, kueue::FlavorPlacement> flavors;  // ResourceFlavors by name
  // The value of the pod template's priorityClassName, when it names one that exists.
  std::optional<int32_t> priority;
};

struct Observed {
  std::vector<ObservedPod> pods;                 // pods labelled with the job's name
  std::vector<ObservedObject> services;          // Services labelled with the job's name
  std::vector<ObservedObject> network_policies;  // NetworkPolicies labelled with it
  // Where the operator runs: its progress probe scrapes the ranks' metrics from there.
  std::string operator_namespace;
  // The Nodes the pods above are scheduled to, by name, when the operator watches Nodes
  // (--watch-nodes); one missing here is not known yet (never lost). Without nodes_watched
  // nothing is known of nodes and no node is ever called lost.
  bool nodes_watched = false;
  std::map<std::string, ObservedNode> nodes;
  // apiVersion of the PodGroup API the cluster serves ("scheduling.k8s.io/v1alpha2"), "" when
  // it serves none: then placement is pod by pod (GangScheduling=False, NotServed); nullopt
  // when not known (no PodGroup, no GangScheduling condition).
  std::optional<std::string> pod_group_api;
  // Set for jobs labelled kueue.x-k8s.io/queue-name; nullopt otherwise.
  std::optional<ObservedKueue> kueue;
};

struct ReconcileResult {
  std::vector<Action> actions;
  api::TrainingJobStatus status;
  // Reconcile again after this many seconds even without a watch event (deadline, TTL).
  std::optional<int64_t> requeue_after_seconds;
};

// Under restartPolicy ExitCode, how long a permanent exit code (1-127) waits for the other
// pods of its group to settle before it fails the job: when one rank is killed (137), its
// peers exit 1 from the broken collective, and their status may reach the operator first.
// Collateral exits (exit_code::kPeerLost) wait as long, under every policy, before a gang
// with no other failure restarts as for a disruption.
inline constexpr int64_t kExitCodeVerdictGraceSeconds = 10;

// Status reason of a gang restart caused by a lost node, and of the ranks it ran.
inline constexpr const char* kReasonNodeLost = "NodeLost";

// parse_errors: type errors from api::parse_training_job; they fail the job like validation
// errors do.
ReconcileResult reconcile(const api::TrainingJob& job,
                          const std::vector<api::FieldError>& parse_errors,
                          const Observed& observed, api::UnixSeconds now);

}  // namespace ddp3d::op::controller
