// Why a pod of the gang stopped, told apart so that the operator restarts for the right cause
// and blames the right rank: a disruption (Kubernetes or someone outside took the pod away),
// a collateral exit (the rank stopped because a peer was lost, exit_code::kPeerLost), or the
// program's own failure.
#pragma once

#include <string>
#include <vector>

#include "operator/controller/observed.h"

namespace ddp3d::op::controller {

// How a pod of the current attempt was disrupted, for the status message ("deleted by
// Kubernetes (EvictionByEvictionAPI)"), or "" when it was not. A disruption is a
// DisruptionTarget condition, phase Unknown (node unreachable), a pod reason the kubelet or
// node controller gives to pods it stops (Evicted, NodeLost, Shutdown, NodeShutdown,
// Terminated), or a deletionTimestamp on a pod that had not failed on its own (the operator
// deletes pods of the current attempt only after moving to the next one, so someone else
// did). A pod that Succeeded is never disrupted.
std::string disruption_of(const ObservedPod& pod);

// The rank stopped because another rank or node was lost, not for a fault of its own.
bool is_peer_lost(const ObservedPod& pod);

// The failed pod to blame among `failed` (non-empty): one that did not exit kPeerLost if
// any, the earliest to finish among those (pods without a finish time after those with one),
// the lowest rank on a tie.
const ObservedPod* blamed_failure(const std::vector<const ObservedPod*>& failed);

}  // namespace ddp3d::op::controller
