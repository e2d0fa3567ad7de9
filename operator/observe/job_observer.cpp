#include "operator/observe/job_observer.h"

#include "operator/api/names.h"
#include "operator/controller/kueue_workload.h"
#include "operator/kube/client.h"

namespace ddp3d::op::observe {
namespace {

bool has_label(const web::json::value& obj, const char* key, const std::string& want) {
  if (!obj.has_field("metadata")) return false;
  const auto& meta = obj.at("metadata");
  return meta.has_field("labels") && meta.at("labels").has_string_field(key) &&
         meta.at("labels").at(key).as_string() == want;
}

// The owner index, narrowed to objects that carry the job's name label: this job's objects
// only, whatever else the caches hold.
template <class Observe, class Out>
void collect(const kube::ObjectCache& cache, const api::TrainingJob& job, Observe observe,
             Out& out) {
  const std::string label = api::job_label_value(job.meta.name);
  for (const auto& obj : cache.list_owned_by(job.meta.uid)) {
    if (has_label(*obj, api::kLabelJobName, label)) out.push_back(observe(*obj));
  }
}

// What Kueue holds for a queued job: its Workload (the newest one it owns, should the API
// hold two), the ResourceFlavors, and its PriorityClass's value while it has no Workload yet.
controller::ObservedKueue observe_kueue(const api::TrainingJob& job, const JobSources& sources) {
  controller::ObservedKueue k;
  k.disabled = sources.kueue_disabled;
  k.served = sources.kueue_served && sources.workloads && sources.resource_flavors;
  if (!k.served) return k;
  std::vector<controller::kueue::ObservedWorkload> owned;
  collect(*sources.workloads, job, controller::kueue::observe_workload, owned);
  for (auto& w : owned) {
    if (!k.workload || (k.workload->deleting && !w.deleting)) k.workload = std::move(w);
  }
  for (const auto& f : sources.resource_flavors->list()) {
    k.flavors[kube::meta_name(*f)] = controller::kueue::observe_flavor(*f);
  }
  const auto& tpl = job.spec.pod_template;
  if (!k.workload && sources.priority_of && tpl.has_field("spec") &&
      tpl.at("spec").has_string_field("priorityClassName")) {
    k.priority = sources.priority_of(tpl.at("spec").at("priorityClassName").as_string());
  }
  return k;
}

}  // namespace

controller::Observed observe_job(const api::TrainingJob& job, const JobSources& sources) {
  controller::Observed observed;
  collect(*sources.pods, job, controller::observe_pod, observed.pods);
  if (sources.scrape) {
    for (auto& p : observed.pods) p.scrape = sources.scrape(p.uid);
  }
  collect(*sources.services, job, controller::observe_object, observed.services);
  collect(*sources.network_policies, job, controller::observe_object, observed.network_policies);
  observed.operator_namespace = sources.operator_namespace;
  observed.pod_group_api = sources.pod_group_api;
  if (controller::kueue::queue_name(job)) observed.kueue = observe_kueue(job, sources);
  if (!sources.nodes) return observed;
  observed.nodes_watched = true;
  for (const auto& p : observed.pods) {
    if (p.node_name.empty() || observed.nodes.count(p.node_name)) continue;
    if (const auto node = sources.nodes->get(p.node_name)) {
      observed.nodes[p.node_name] = controller::observe_node(*node);
    } else if (sources.node_deleted && sources.node_deleted(p.node_name)) {
      controller::ObservedNode gone;
      gone.name = p.node_name;
      gone.deleted = true;
      observed.nodes[p.node_name] = gone;
    }
  }
  return observed;
}

}  // namespace ddp3d::op::observe
