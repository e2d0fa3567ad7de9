#include "operator/controller/stuck_pods.h"

namespace ddp3d::op::controller {

std::optional<StuckPod> stuck_reason(const ObservedPod& pod) {
  if (pod.deleting || (pod.phase != "Pending" && !pod.phase.empty())) return std::nullopt;
  // A container waiting with a reason means the pod was scheduled; that reason is the news.
  if (!pod.waiting_reason.empty()) return StuckPod{pod.waiting_reason, pod.waiting_message};
  if (!pod.unschedulable_reason.empty()) {
    return StuckPod{pod.unschedulable_reason, pod.unschedulable_message};
  }
  return std::nullopt;
}

}  // namespace ddp3d::op::controller
