// What the operator keeps of each object its informers receive (kube::Informer::Options::
// transform). The caches hold many pods and Services; most of their JSON is spec, managedFields
// and status detail the controller never reads, so it is dropped on ingest.
//
// What must survive is what the controller reads: for pods, observe_pod() (observed.cpp) and
// the owner lookups in observe/job_observer.cpp; for Services and NetworkPolicies,
// observe_object(); for TrainingJobs,
// parse_training_job() — and the job object is also the body of the status write, so jobs lose
// only server-side bookkeeping. Pure functions; tests/unit/operator/cache_transforms_test.cpp
// checks that the reconciler's inputs come through unchanged.
#pragma once

#include <cpprest/json.h>

namespace ddp3d::op::controller {

// metadata.managedFields and the kubectl.kubernetes.io/last-applied-configuration annotation
// removed; everything else kept.
web::json::value slim_training_job(const web::json::value& job);

// metadata: name, namespace, uid, resourceVersion, generation, labels, ownerReferences,
// creationTimestamp, deletionTimestamp. status: phase, reason, DisruptionTarget-relevant
// condition fields (type, status, reason) and each container's state.terminated exitCode,
// reason and finishedAt. No spec, no annotations.
web::json::value slim_pod(const web::json::value& pod);

// metadata as for pods; no spec, no status.
web::json::value slim_service(const web::json::value& service);

// metadata: name, uid, resourceVersion. status.conditions: the Ready condition only (type,
// status, reason, lastTransitionTime). A Node's status carries its image list and more: none
// of it is read.
web::json::value slim_node(const web::json::value& node);

}  // namespace ddp3d::op::controller
