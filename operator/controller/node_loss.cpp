#include "operator/controller/node_loss.h"

#include <algorithm>

namespace ddp3d::op::controller {

NodeVerdict assess_node(const std::string& name, const ObservedNode* node, int64_t timeout_seconds,
                        api::UnixSeconds now) {
  NodeVerdict v;
  if (!node) return v;
  if (node->deleted) {
    v.lost = true;
    v.why = "node " + name + " was deleted";
    return v;
  }
  if (node->ready.empty() || node->ready == "True") return v;
  // No transition time (a hand-written status): count from now, so the timeout still applies
  // once it is seen again; the caller rechecks.
  const api::UnixSeconds since = node->ready_since.value_or(now);
  const int64_t down_for = std::max<int64_t>(0, now - since);
  v.why = "node " + name + " has been Ready=" + node->ready +
          (node->reason.empty() ? "" : " (" + node->reason + ")") + " for " +
          std::to_string(down_for) + "s";
  if (down_for >= timeout_seconds) {
    v.lost = true;
    v.why += ", past runPolicy.nodeLossTimeoutSeconds=" + std::to_string(timeout_seconds);
  } else {
    v.recheck_in = timeout_seconds - down_for;
  }
  return v;
}

}  // namespace ddp3d::op::controller
