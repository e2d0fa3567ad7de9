// The Service and pods a TrainingJob should have: pure functions from the job to the API
// objects, including the environment contract of design.md that every pod carries.
#pragma once

#include <cpprest/json.h>

#include <string>
#include <utility>
#include <vector>

#include "operator/api/training_job.h"

namespace ddp3d::op::controller {

// Name of the container the operator fills in (the template's first container keeps its name).
inline constexpr const char* kWorkerContainer = "worker";

// Container port name of one local rank's /metrics: "metrics" for local rank 0 (what the
// prometheus.io/port annotation points at), "metrics-<i>" for the others.
std::string metrics_port_name(int local_rank);

// DNS name of rank 0's pod under the headless Service: "<pod>.<service>.<namespace>.svc".
std::string master_addr(const api::TrainingJob& job);

// The reserved variables, in contract order, for one node of one attempt that runs on `size`
// nodes (0: spec.nnodes). NNODES and WORLD_SIZE follow the size; DDP3D_BATCH_WORLD_SIZE is
// always the full size's world, the one the job's global batch is defined at.
std::vector<std::pair<std::string, std::string>> contract_env(const api::TrainingJob& job, int rank,
                                                              int attempt, int size = 0);

// The Secret key that holds an attempt's rendezvous token, and the variable it fills.
inline constexpr const char* kRendezvousTokenKey = "token";
inline constexpr const char* kRendezvousTokenEnv = "DDP3D_RENDEZVOUS_TOKEN";

// Metadata of an object the job owns outright (Service, NetworkPolicy, Secret, PodGroup,
// Workload): its name, the job's namespace, the job-name label, the recommended
// app.kubernetes.io labels (`component`: what the object is to the job) and the controller
// ownerReference.
web::json::value owned_metadata(const api::TrainingJob& job, const std::string& name,
                                const std::string& component);
// The recommended labels (app.kubernetes.io/name ddp3d, instance = the job, component,
// managed-by ddp3d-operator) on every object the operator derives from a job.
void add_recommended_labels(web::json::value& labels, const api::TrainingJob& job,
                            const std::string& component);

web::json::value desired_service(const api::TrainingJob& job);
// spec.network.policy: ingress to the job's pods from the job's pods (rendezvous, Gloo), and
// to their metrics ports from `operator_namespace` (the progress probe; skipped when empty)
// and spec.network.metricsNamespaces.
web::json::value desired_network_policy(const api::TrainingJob& job,
                                        const std::string& operator_namespace);
// spec.network.rendezvousSecret: attempt `attempt`'s Secret, immutable, without its token.
web::json::value desired_rendezvous_secret(const api::TrainingJob& job, int attempt);
// Attempt `attempt`'s PodGroup (`api_version`: "scheduling.k8s.io/v1alpha2" or a later version
// of the same shape): the scheduler places its pods all together or not at all, minCount =
// the attempt's size (0: spec.nnodes).
web::json::value desired_pod_group(const api::TrainingJob& job, int attempt,
                                   const std::string& api_version, int size = 0);
// `pod_group`: the PodGroup the pod belongs to (spec.schedulingGroup.podGroupName); "" = none.
// `size`: nodes of the attempt (0: spec.nnodes).
web::json::value desired_pod(const api::TrainingJob& job, int rank, int attempt,
                             const std::string& pod_group = "", int size = 0);
// Probe pod `index` of attempt `attempt` (spec.elastic): asks the scheduler for the room of one
// more node. It has the first container's resources, the pod's nodeSelector, affinity,
// tolerations, priority and scheduler, sleeps, has no volumes, and stops at once when deleted.
web::json::value desired_grow_probe(const api::TrainingJob& job, int index, int attempt);

}  // namespace ddp3d::op::controller
