#include "operator/controller/pod_failure.h"

#include <array>
#include <string_view>

#include "common/exit_codes.h"

namespace ddp3d::op::controller {

std::string disruption_of(const ObservedPod& pod) {
  // A rank that finished its work was not disrupted, whatever happens to its pod now.
  if (pod.phase == "Succeeded") return "";
  if (!pod.disruption_target.empty()) {
    return (pod.deleting ? "deleted by Kubernetes (" : "marked for disruption (") +
           pod.disruption_target + ")";
  }
  if (pod.phase == "Unknown") return "lost with its node (phase Unknown)";
  // status.reason values of pods that the kubelet (node-pressure eviction, graceful node
  // shutdown) or the node controller (NodeLost) stopped.
  static constexpr std::array<std::string_view, 5> kReasons = {"Evicted", "NodeLost", "Shutdown",
                                                               "NodeShutdown", "Terminated"};
  for (std::string_view r : kReasons) {
    if (pod.pod_reason == r) return "stopped by its node (" + pod.pod_reason + ")";
  }
  // Its ranks checkpointed and stopped on a SIGTERM (this pod's, or a peer's: the ranks stop
  // together): preempted, resumable.
  if (pod.exit_code && *pod.exit_code == exit_code::kPreempted)
    return "stopped after a checkpoint on SIGTERM (exit code 201)";
  // A pod that failed on its own and was deleted afterwards is a failure, not a disruption.
  if (pod.deleting && pod.phase != "Failed") return "deleted from outside the operator";
  return "";
}

bool is_peer_lost(const ObservedPod& pod) {
  return pod.exit_code && *pod.exit_code == exit_code::kPeerLost;
}

const ObservedPod* blamed_failure(const std::vector<const ObservedPod*>& failed) {
  auto earlier = [](const ObservedPod* a, const ObservedPod* b) {
    if (a->finished_at.has_value() != b->finished_at.has_value()) return a->finished_at.has_value();
    if (a->finished_at && *a->finished_at != *b->finished_at) {
      return *a->finished_at < *b->finished_at;
    }
    return a->rank < b->rank;
  };
  // Whether `a` is a better suspect than `b`: not collateral first, then the earliest.
  auto better = [&](const ObservedPod* a, const ObservedPod* b) {
    if (is_peer_lost(*a) != is_peer_lost(*b)) return !is_peer_lost(*a);
    return earlier(a, b);
  };
  const ObservedPod* best = nullptr;
  for (const ObservedPod* p : failed) {
    if (!best || better(p, best)) best = p;
  }
  return best;
}

}  // namespace ddp3d::op::controller
