// Status conditions, Kubernetes style: lastTransitionTime changes only when status flips.
#pragma once

#include <string>
#include <vector>

#include "operator/api/training_job.h"

namespace ddp3d::op::controller {

// Condition types the operator maintains.
inline constexpr const char* kCondCreated = "Created";
inline constexpr const char* kCondRunning = "Running";
inline constexpr const char* kCondRestarting = "Restarting";
inline constexpr const char* kCondSucceeded = "Succeeded";
inline constexpr const char* kCondFailed = "Failed";
inline constexpr const char* kCondSuspended = "Suspended";
// kueue.x-k8s.io/queue-name: waiting for Kueue's admission (phase Queued).
inline constexpr const char* kCondQueued = "Queued";
// A pod of the current attempt cannot start (image pull error, unschedulable): reason and
// message name the first such pod (controller/stuck_pods.h).
inline constexpr const char* kCondStuck = "Stuck";
// Whether the current attempt's pods are placed all together or not at all (a PodGroup with
// the scheduler's gang scheduling): True, or False saying why not (NotServed, Disabled).
inline constexpr const char* kCondGangScheduling = "GangScheduling";
// spec.elastic: True when the job runs on all spec.nnodes nodes; False says on how many and why.
inline constexpr const char* kCondFullSize = "FullSize";

// The reason of a condition set without one (a reason is required, as in metav1.Condition).
inline constexpr const char* kReasonUnspecified = "Unspecified";

// `message` within metav1.Condition's 32768 bytes (cut at a UTF-8 boundary, marked as cut).
std::string bounded_message(const std::string& message);

// metav1.Condition's status values.
inline constexpr const char* kStatusTrue = "True";
inline constexpr const char* kStatusFalse = "False";
inline constexpr const char* kStatusUnknown = "Unknown";

// Sets (or adds) a condition. A False condition that was never True is not added, so the list
// holds only what has happened (unless it was listed Unknown: then it turns False).
void set_condition(std::vector<api::Condition>* conditions, const std::string& type, bool status,
                   const std::string& reason, const std::string& message, const std::string& now);

// Like set_condition, but a False condition is added too: for a standing fact a user should
// see either way (GangScheduling), not an event that may never happen.
void report_condition(std::vector<api::Condition>* conditions, const std::string& type, bool status,
                      const std::string& reason, const std::string& message,
                      const std::string& now);

// Sets (or adds) a condition as Unknown: the operator owns it but cannot tell its truth yet
// (the metav1 convention lists such a condition from the controller's first pass rather than
// leave it absent). Like set_condition, lastTransitionTime moves only when the status changes.
void set_unknown(std::vector<api::Condition>* conditions, const std::string& type,
                 const std::string& reason, const std::string& message, const std::string& now);

const api::Condition* find_condition(const std::vector<api::Condition>& conditions,
                                     const std::string& type);

}  // namespace ddp3d::op::controller
