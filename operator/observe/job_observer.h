// Observe: what the informers' caches show of one TrainingJob's world, as the pure
// reconcile() reads it (controller::Observed). Reads caches only, never the API server.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "operator/api/training_job.h"
#include "operator/controller/observed.h"
#include "operator/controller/reconcile.h"
#include "operator/kube/object_cache.h"

namespace ddp3d::op::observe {

// Where a job's objects are read from. The caches hold only objects labelled with some job's
// name; the job's own are those it owns (ownerReferences) and labelled with its name.
struct JobSources {
  const kube::ObjectCache* pods = nullptr;
  const kube::ObjectCache* services = nullptr;
  const kube::ObjectCache* network_policies = nullptr;
  // Null when Nodes are not watched: then no node is ever called lost.
  const kube::ObjectCache* nodes = nullptr;
  // Whether the Node informer saw a node deleted (and not registered again since).
  std::function<bool(const std::string& node)> node_deleted;
  // The progress probe's latest scrape of a pod, by uid (empty function: no probe).
  std::function<std::optional<controller::ProgressScrape>(const std::string& uid)> scrape;
  std::string operator_namespace;
  // The PodGroup API the cluster serves (controller::Observed::pod_group_api).
  std::optional<std::string> pod_group_api;
  // Kueue, read for jobs labelled kueue.x-k8s.io/queue-name: whether its Workload API is
  // served, the caches of Workloads (labelled with some job's name) and ResourceFlavors, and
  // the value of a PriorityClass by name (nullopt: none of that name).
  bool kueue_served = false;
  bool kueue_disabled = false;  // the operator runs with --kueue=false
  const kube::ObjectCache* workloads = nullptr;
  const kube::ObjectCache* resource_flavors = nullptr;
  std::function<std::optional<int32_t>(const std::string& priority_class)> priority_of;
};

controller::Observed observe_job(const api::TrainingJob& job, const JobSources& sources);

}  // namespace ddp3d::op::observe
