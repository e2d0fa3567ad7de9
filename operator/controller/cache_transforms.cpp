#include "operator/controller/cache_transforms.h"

#include <initializer_list>

namespace ddp3d::op::controller {

using web::json::value;

namespace {

constexpr const char* kLastApplied = "kubectl.kubernetes.io/last-applied-configuration";

// A new object with only `keys` of `from` (those that are present).
value pick(const value& from, std::initializer_list<const char*> keys) {
  value out = value::object();
  if (!from.is_object()) return out;
  for (const char* k : keys)
    if (from.has_field(k)) out[k] = from.at(k);
  return out;
}

value slim_child_metadata(const value& obj) {
  if (!obj.is_object() || !obj.has_field("metadata")) return value::object();
  return pick(obj.at("metadata"),
              {"name", "namespace", "uid", "resourceVersion", "generation", "labels",
               "ownerReferences", "creationTimestamp", "deletionTimestamp"});
}

value slim_pod_status(const value& status) {
  // podIP: the progress probe's target; waiting states and the conditions' messages: why a
  // pod is stuck before running (status.conditions[Stuck]).
  value out = pick(status, {"phase", "reason", "podIP"});
  if (status.has_field("conditions") && status.at("conditions").is_array()) {
    value conditions = value::array();
    std::size_t n = 0;
    for (const auto& c : status.at("conditions").as_array()) {
      // Only the scheduler's message is read (why the pod is Unschedulable).
      const bool scheduled = c.is_object() && c.has_field("type") && c.at("type").is_string() &&
                             c.at("type").as_string() == "PodScheduled";
      conditions[n++] = scheduled ? pick(c, {"type", "status", "reason", "message"})
                                  : pick(c, {"type", "status", "reason"});
    }
    out["conditions"] = conditions;
  }
  for (const char* list : {"initContainerStatuses", "containerStatuses"}) {
    if (!status.has_field(list) || !status.at(list).is_array()) continue;
    value statuses = value::array();
    std::size_t n = 0;
    for (const auto& cs : status.at(list).as_array()) {
      value slim = pick(cs, {"name"});
      if (cs.is_object() && cs.has_field("state") && cs.at("state").is_object()) {
        const value& state = cs.at("state");
        if (state.has_field("terminated")) {
          slim["state"]["terminated"] =
              pick(state.at("terminated"), {"exitCode", "reason", "finishedAt"});
        }
        if (state.has_field("waiting")) {
          slim["state"]["waiting"] = pick(state.at("waiting"), {"reason", "message"});
        }
      }
      statuses[n++] = slim;
    }
    out[list] = statuses;
  }
  return out;
}

}  // namespace

value slim_training_job(const value& job) {
  value out = job;
  if (!out.is_object() || !out.has_field("metadata") || !out.at("metadata").is_object()) return out;
  value& meta = out.at("metadata");
  if (meta.has_field("managedFields")) meta.erase("managedFields");
  if (meta.has_field("annotations") && meta.at("annotations").is_object()) {
    value& annotations = meta.at("annotations");
    if (annotations.has_field(kLastApplied)) annotations.erase(kLastApplied);
    if (annotations.size() == 0) meta.erase("annotations");
  }
  return out;
}

value slim_pod(const value& pod) {
  value out = value::object();
  out["metadata"] = slim_child_metadata(pod);
  if (pod.is_object() && pod.has_field("spec") && pod.at("spec").is_object()) {
    value spec = pick(pod.at("spec"), {"nodeName"});
    if (spec.size() > 0) out["spec"] = spec;
  }
  if (pod.is_object() && pod.has_field("status") && pod.at("status").is_object())
    out["status"] = slim_pod_status(pod.at("status"));
  return out;
}

value slim_node(const value& node) {
  value out = value::object();
  if (!node.is_object()) return out;
  if (node.has_field("metadata")) {
    out["metadata"] = pick(node.at("metadata"), {"name", "uid", "resourceVersion"});
  }
  if (!node.has_field("status") || !node.at("status").is_object()) return out;
  const value& status = node.at("status");
  if (!status.has_field("conditions") || !status.at("conditions").is_array()) return out;
  value conditions = value::array();
  std::size_t n = 0;
  for (const auto& c : status.at("conditions").as_array()) {
    if (c.is_object() && c.has_field("type") && c.at("type").is_string() &&
        c.at("type").as_string() == "Ready") {
      conditions[n++] = pick(c, {"type", "status", "reason", "lastTransitionTime"});
    }
  }
  out["status"]["conditions"] = conditions;
  return out;
}

value slim_service(const value& service) {
  value out = value::object();
  out["metadata"] = slim_child_metadata(service);
  return out;
}

}  // namespace ddp3d::op::controller
