#include "operator/controller/observed.h"

#include <charconv>

#include "operator/api/names.h"
#include "operator/api/timestamps.h"

namespace ddp3d::op::controller {

using web::json::value;

namespace {

const value* field(const value& v, const char* key) {
  if (!v.is_object() || !v.has_field(key)) return nullptr;
  const value& f = v.at(key);
  return f.is_null() ? nullptr : &f;
}

std::string string_field(const value& v, const char* key) {
  const value* f = field(v, key);
  return f && f->is_string() ? f->as_string() : "";
}

int int_label(const value& meta, const char* key) {
  const value* labels = field(meta, "labels");
  if (!labels) return -1;
  const std::string s = string_field(*labels, key);
  int out = -1;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty() || out < 0) return -1;
  return out;
}

// Waiting reasons every pod passes through on its way to Running.
bool normal_waiting(const std::string& reason) {
  return reason.empty() || reason == "ContainerCreating" || reason == "PodInitializing";
}

// The first container of `list` waiting for a reason that is not part of a normal start.
void find_waiting(const value* list, ObservedPod* o) {
  if (!list || !list->is_array() || !o->waiting_reason.empty()) return;
  for (const auto& cs : list->as_array()) {
    const value* state = field(cs, "state");
    const value* waiting = state ? field(*state, "waiting") : nullptr;
    if (!waiting) continue;
    const std::string reason = string_field(*waiting, "reason");
    if (normal_waiting(reason)) continue;
    const std::string container = string_field(cs, "name");
    o->waiting_reason = reason;
    o->waiting_message = string_field(*waiting, "message");
    if (!container.empty()) {
      o->waiting_message =
          "container " + container + (o->waiting_message.empty() ? "" : ": " + o->waiting_message);
    }
    return;
  }
}

}  // namespace

ObservedPod observe_pod(const value& pod) {
  ObservedPod o;
  static const value kEmpty = value::object();
  const value* meta = field(pod, "metadata");
  const value& m = meta ? *meta : kEmpty;
  o.name = string_field(m, "name");
  o.uid = string_field(m, "uid");
  o.deleting = field(m, "deletionTimestamp") != nullptr;
  o.rank = int_label(m, api::kLabelNodeRank);
  o.attempt = int_label(m, api::kLabelAttempt);
  if (const value* labels = field(m, "labels")) {
    o.grow_probe = string_field(*labels, api::kLabelRole) == api::kRoleGrowProbe;
  }
  if (const value* spec = field(pod, "spec")) o.node_name = string_field(*spec, "nodeName");
  const value* status = field(pod, "status");
  if (!status) return o;
  o.phase = string_field(*status, "phase");
  o.pod_ip = string_field(*status, "podIP");
  find_waiting(field(*status, "initContainerStatuses"), &o);
  find_waiting(field(*status, "containerStatuses"), &o);
  o.reason = string_field(*status, "reason");
  o.pod_reason = o.reason;
  if (const value* conditions = field(*status, "conditions");
      conditions && conditions->is_array()) {
    for (const auto& c : conditions->as_array()) {
      if (string_field(c, "type") == "PodScheduled" && string_field(c, "status") == "False") {
        o.unschedulable_reason = string_field(c, "reason");
        if (o.unschedulable_reason.empty()) o.unschedulable_reason = "Unschedulable";
        o.unschedulable_message = string_field(c, "message");
      }
      if (string_field(c, "type") != "DisruptionTarget" || string_field(c, "status") != "True") {
        continue;
      }
      const std::string why = string_field(c, "reason");
      o.disruption_target = why.empty() ? "DisruptionTarget" : why;
    }
  }
  const value* statuses = field(*status, "containerStatuses");
  if (!statuses || !statuses->is_array()) return o;
  for (const auto& cs : statuses->as_array()) {
    const value* state = field(cs, "state");
    const value* terminated = state ? field(*state, "terminated") : nullptr;
    if (!terminated) continue;
    const value* code = field(*terminated, "exitCode");
    if (!code || !code->is_integer()) continue;
    const int c = code->as_integer();
    // A non-zero code explains the failure better than a sibling container's clean exit.
    if (!o.exit_code || (*o.exit_code == 0 && c != 0)) {
      o.exit_code = c;
      o.finished_at = api::parse_rfc3339(string_field(*terminated, "finishedAt"));
      if (o.reason.empty() || c != 0) {
        const std::string r = string_field(*terminated, "reason");
        if (!r.empty()) o.reason = r;
      }
    }
  }
  return o;
}

ObservedObject observe_object(const value& object) {
  ObservedObject o;
  if (const value* meta = field(object, "metadata")) {
    o.name = string_field(*meta, "name");
    o.uid = string_field(*meta, "uid");
  }
  return o;
}

ObservedNode observe_node(const value& node) {
  ObservedNode o;
  if (const value* meta = field(node, "metadata")) o.name = string_field(*meta, "name");
  const value* status = field(node, "status");
  const value* conditions = status ? field(*status, "conditions") : nullptr;
  if (!conditions || !conditions->is_array()) return o;
  for (const auto& c : conditions->as_array()) {
    if (string_field(c, "type") != "Ready") continue;
    o.ready = string_field(c, "status");
    o.reason = string_field(c, "reason");
    o.ready_since = api::parse_rfc3339(string_field(c, "lastTransitionTime"));
  }
  return o;
}

}  // namespace ddp3d::op::controller
