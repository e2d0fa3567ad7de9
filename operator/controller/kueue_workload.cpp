#include "operator/controller/kueue_workload.h"

#include <climits>

#include "operator/api/names.h"
#include "operator/controller/desired_objects.h"

namespace ddp3d::op::controller::kueue {

using web::json::value;

namespace {

const value* field(const value& obj, const char* key) {
  if (!obj.is_object() || !obj.has_field(key)) return nullptr;
  return &obj.at(key);
}

std::string string_at(const value& obj, const char* key) {
  const value* v = field(obj, key);
  return v && v->is_string() ? v->as_string() : "";
}

std::optional<int> int_at(const value& obj, const char* key) {
  const value* v = field(obj, key);
  if (!v || !v->is_number() || !v->as_number().is_int64()) return std::nullopt;
  const int64_t n = v->as_number().to_int64();
  if (n < 0 || n > INT_MAX) return std::nullopt;
  return static_cast<int>(n);
}

// The condition of `type` in status.conditions, or null.
const value* condition(const value& workload, const std::string& type) {
  const value* status = field(workload, "status");
  const value* conds = status ? field(*status, "conditions") : nullptr;
  if (!conds || !conds->is_array()) return nullptr;
  for (const auto& c : conds->as_array()) {
    if (string_at(c, "type") == type) return &c;
  }
  return nullptr;
}

bool is_true(const value* cond) {
  return cond && string_at(*cond, "status") == "True";
}

int64_t generation_of(const value& workload) {
  const value* meta = field(workload, "metadata");
  const value* g = meta ? field(*meta, "generation") : nullptr;
  return g && g->is_number() && g->as_number().is_int64() ? g->as_number().to_int64() : 0;
}

// Sets condition `type` in `conditions` (an array), keeping lastTransitionTime when the status
// does not change.
void set_condition(value& conditions, const std::string& type, bool status,
                   const std::string& reason, const std::string& message, int64_t generation,
                   api::UnixSeconds now) {
  const std::string want = status ? "True" : "False";
  value c = value::object();
  c["type"] = value::string(type);
  c["status"] = value::string(want);
  c["reason"] = value::string(reason);
  c["message"] = value::string(message);
  c["observedGeneration"] = value::number(generation);
  c["lastTransitionTime"] = value::string(api::format_rfc3339(now));
  auto& arr = conditions.as_array();
  for (auto& existing : arr) {
    if (string_at(existing, "type") != type) continue;
    if (string_at(existing, "status") == want && existing.has_field("lastTransitionTime")) {
      c["lastTransitionTime"] = existing.at("lastTransitionTime");
    }
    existing = c;
    return;
  }
  conditions[arr.size()] = c;
}

value status_of(const value& workload) {
  const value* s = field(workload, "status");
  value status = s && s->is_object() ? *s : value::object();
  if (!status.has_field("conditions") || !status.at("conditions").is_array()) {
    status["conditions"] = value::array();
  }
  return status;
}

}  // namespace

std::optional<std::string> queue_name(const api::TrainingJob& job) {
  const auto it = job.meta.labels.find(kQueueNameLabel);
  if (it == job.meta.labels.end()) return std::nullopt;
  return it->second;
}

value desired_workload(const api::TrainingJob& job, const std::string& queue,
                       std::optional<int32_t> priority) {
  const std::string name = api::workload_name(job.meta.name);
  value w = value::object();
  w["apiVersion"] = value::string(kApiVersion);
  w["kind"] = value::string("Workload");
  value meta = owned_metadata(job, name, "workload");
  meta["labels"][kJobUidLabel] = value::string(job.meta.uid);
  meta["finalizers"] = value::array();
  meta["finalizers"][0] = value::string(kResourceInUseFinalizer);
  w["metadata"] = meta;
  // The ranks' pod as the operator would create it, rank 0 of the first attempt: requests,
  // nodeSelector, tolerations, priority as every rank has them.
  const value pod = desired_pod(job, 0, 0);
  value set = value::object();
  set["name"] = value::string(kPodSetName);
  set["count"] = value::number(job.spec.nnodes);
  if (job.spec.elastic) {
    const int min = api::min_nodes(job.spec);
    if (min > 0 && min < job.spec.nnodes) set["minCount"] = value::number(min);
  }
  value tpl = value::object();
  tpl["metadata"] = value::object();
  tpl["metadata"]["labels"] = pod.at("metadata").at("labels");
  tpl["spec"] = pod.at("spec");
  set["template"] = tpl;
  value spec = value::object();
  spec["queueName"] = value::string(queue);
  spec["podSets"] = value::array();
  spec["podSets"][0] = set;
  const value& pod_spec = pod.at("spec");
  if (pod_spec.has_string_field("priorityClassName") && priority) {
    value ref = value::object();
    ref["group"] = value::string("scheduling.k8s.io");
    ref["kind"] = value::string("PriorityClass");
    ref["name"] = pod_spec.at("priorityClassName");
    spec["priorityClassRef"] = ref;
    spec["priority"] = value::number(*priority);
  }
  w["spec"] = spec;
  return w;
}

ObservedWorkload observe_workload(const value& workload) {
  ObservedWorkload w;
  if (const value* meta = field(workload, "metadata")) {
    w.name = string_at(*meta, "name");
    w.uid = string_at(*meta, "uid");
    w.resource_version = string_at(*meta, "resourceVersion");
    w.deleting = field(*meta, "deletionTimestamp") != nullptr;
    if (const value* f = field(*meta, "finalizers"); f && f->is_array()) {
      for (const auto& s : f->as_array()) {
        w.has_finalizer |= s.is_string() && s.as_string() == kResourceInUseFinalizer;
      }
    }
  }
  if (const value* spec = field(workload, "spec")) {
    w.queue_name = string_at(*spec, "queueName");
    if (const value* sets = field(*spec, "podSets"); sets && sets->is_array() && sets->size() > 0) {
      w.pod_count = int_at(sets->at(0), "count").value_or(0);
    }
  }
  const value* status = field(workload, "status");
  const value* admission = status ? field(*status, "admission") : nullptr;
  w.has_admission = admission && admission->is_object();
  if (w.has_admission) {
    w.cluster_queue = string_at(*admission, "clusterQueue");
    if (const value* a = field(*admission, "podSetAssignments");
        a && a->is_array() && a->size() > 0) {
      w.admitted_count = int_at(a->at(0), "count");
      if (const value* flavors = field(a->at(0), "flavors"); flavors && flavors->is_object()) {
        for (const auto& [resource, flavor] : flavors->as_object()) {
          if (flavor.is_string()) w.flavors[resource] = flavor.as_string();
        }
      }
    }
  }
  const value* reserved = condition(workload, "QuotaReserved");
  w.admitted = w.has_admission && is_true(reserved) && is_true(condition(workload, "Admitted"));
  if (!w.admitted && reserved) {
    w.pending_reason = string_at(*reserved, "reason");
    w.pending_message = string_at(*reserved, "message");
  }
  if (const value* evicted = condition(workload, "Evicted"); is_true(evicted)) {
    w.evicted = true;
    w.evicted_reason = string_at(*evicted, "reason");
    w.evicted_message = string_at(*evicted, "message");
  }
  w.finished = is_true(condition(workload, "Finished"));
  if (const value* ready = condition(workload, "PodsReady")) {
    w.pods_ready_reason = string_at(*ready, "reason");
  }
  w.object = workload;
  return w;
}

value finalizers_without_ours(const ObservedWorkload& workload) {
  value rest = value::array();
  const value* meta = field(workload.object, "metadata");
  const value* finalizers = meta ? field(*meta, "finalizers") : nullptr;
  if (!finalizers || !finalizers->is_array()) return rest;
  for (const auto& f : finalizers->as_array()) {
    if (f.is_string() && f.as_string() != kResourceInUseFinalizer) rest[rest.size()] = f;
  }
  return rest;
}

FlavorPlacement observe_flavor(const value& flavor) {
  FlavorPlacement f;
  const value* spec = field(flavor, "spec");
  if (!spec) return f;
  if (const value* labels = field(*spec, "nodeLabels"); labels && labels->is_object()) {
    for (const auto& [k, v] : labels->as_object()) {
      if (v.is_string()) f.node_labels[k] = v.as_string();
    }
  }
  if (const value* t = field(*spec, "tolerations"); t && t->is_array()) {
    for (const auto& toleration : t->as_array()) {
      if (toleration.is_object()) f.tolerations[f.tolerations.size()] = toleration;
    }
  }
  return f;
}

void apply_flavors(value& pod, const ObservedWorkload& admitted,
                   const std::map<std::string, FlavorPlacement>& known) {
  std::map<std::string, bool> done;
  value& spec = pod["spec"];
  for (const auto& [resource, name] : admitted.flavors) {
    if (done[name]) continue;
    done[name] = true;
    const auto it = known.find(name);
    if (it == known.end()) continue;
    for (const auto& [k, v] : it->second.node_labels) spec["nodeSelector"][k] = value::string(v);
    if (it->second.tolerations.size() == 0) continue;
    if (!spec.has_field("tolerations") || !spec.at("tolerations").is_array()) {
      spec["tolerations"] = value::array();
    }
    value& tolerations = spec["tolerations"];
    for (const auto& t : it->second.tolerations.as_array()) {
      tolerations[tolerations.size()] = t;
    }
  }
}

value released_status(const value& workload, api::UnixSeconds now) {
  value status = status_of(workload);
  const int64_t generation = generation_of(workload);
  const ObservedWorkload w = observe_workload(workload);
  if (status.has_field("admission")) status.erase("admission");
  const std::string why = w.evicted_message.empty() ? "the job stopped" : w.evicted_message;
  value& conds = status["conditions"];
  // Kueue requeues preempted and node-failed Workloads at once; any other eviction (a stopped
  // queue, a deactivation, a pods-ready timeout) waits until Kueue sets Requeued again.
  const std::string reason = w.evicted_reason;
  const bool requeue = reason.rfind("Preempted", 0) == 0 || reason.rfind("NodeFailures", 0) == 0;
  set_condition(conds, "Requeued", requeue,
                requeue ? "Requeued" : (reason.empty() ? "Pending" : reason), why, generation, now);
  set_condition(conds, "QuotaReserved", false, "Pending", why, generation, now);
  set_condition(conds, "Admitted", false, "NoReservation", "The workload has no reservation",
                generation, now);
  return status;
}

value status_with_condition(const value& workload, const std::string& type, bool status_value,
                            const std::string& reason, const std::string& message,
                            api::UnixSeconds now) {
  value status = status_of(workload);
  set_condition(status["conditions"], type, status_value, reason, message, generation_of(workload),
                now);
  return status;
}

}  // namespace ddp3d::op::controller::kueue
