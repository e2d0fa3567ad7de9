// When a node that runs a job's pods counts as lost (runPolicy.nodeLossTimeoutSeconds). Pure:
// the Node as the informer last saw it and the time in, a verdict out.
//
// Kubernetes' node lifecycle controller marks a node whose kubelet stopped reporting Ready=
// Unknown after its node-monitor grace period (50 s by default); a kubelet that reports a
// failing runtime sets Ready=False itself. Either way nothing on that node can be relied on:
// its pods cannot be signalled, and a pod deleted there stays Terminating until a kubelet
// that may never return confirms it. Past the timeout the operator treats the node as gone.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "operator/api/timestamps.h"
#include "operator/controller/observed.h"

namespace ddp3d::op::controller {

struct NodeVerdict {
  bool lost = false;
  // For status and Events: "node n2 has been Ready=Unknown (NodeStatusUnknown) for 41s".
  std::string why;
  // Not Ready but not lost yet: seconds until it would be, so the caller looks again then.
  std::optional<int64_t> recheck_in;
};

// `node` is null when nothing is known of it (the informer has not seen it yet): not lost. A
// deleted node is lost at once; one without a Ready condition (just registered) or Ready=True
// is not lost.
NodeVerdict assess_node(const std::string& name, const ObservedNode* node, int64_t timeout_seconds,
                        api::UnixSeconds now);

}  // namespace ddp3d::op::controller
