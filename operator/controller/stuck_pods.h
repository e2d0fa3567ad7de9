// Why a pod of the gang cannot start, read from what the kubelet and the scheduler wrote: a
// container waiting for a reason that is not part of a normal start (ErrImagePull,
// ImagePullBackOff, InvalidImageName, CreateContainerConfigError, ...) or PodScheduled=False
// (Unschedulable, with the scheduler's message). Shown in status.conditions[Stuck].
#pragma once

#include <optional>
#include <string>

#include "operator/controller/observed.h"

namespace ddp3d::op::controller {

struct StuckPod {
  std::string reason;   // ImagePullBackOff, Unschedulable, ...
  std::string message;  // "container worker: Back-off pulling image ...", "0/3 nodes ..."
};

// nullopt for a pod that is running, finished, being deleted, or starting normally.
std::optional<StuckPod> stuck_reason(const ObservedPod& pod);

}  // namespace ddp3d::op::controller
