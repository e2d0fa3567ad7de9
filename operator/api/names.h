// Names of the objects derived from a TrainingJob. A job name may be a 253-character DNS-1123
// subdomain, but pod hostnames, Service names and label values are limited to 63 characters,
// so derived names are shortened with a stable hash of the full job name: the same job always
// maps to the same names (idempotent creates), and two long names sharing a prefix still differ.
#pragma once

#include <cstdint>
#include <string>

namespace ddp3d::op::api {

inline constexpr size_t kMaxLabelLength = 63;

// Label keys the operator sets on every object it owns.
inline constexpr const char* kLabelJobName = "ddp3d.io/job-name";
inline constexpr const char* kLabelNodeRank = "ddp3d.io/node-rank";
inline constexpr const char* kLabelAttempt = "ddp3d.io/attempt";
// Pods that are not ranks say what they are: ddp3d.io/role=grow-probe (spec.elastic).
inline constexpr const char* kLabelRole = "ddp3d.io/role";
inline constexpr const char* kRoleGrowProbe = "grow-probe";
// Kubernetes' recommended labels, on every derived object too.
inline constexpr const char* kLabelAppName = "app.kubernetes.io/name";
inline constexpr const char* kLabelAppInstance = "app.kubernetes.io/instance";
inline constexpr const char* kLabelAppComponent = "app.kubernetes.io/component";
inline constexpr const char* kLabelAppManagedBy = "app.kubernetes.io/managed-by";
inline constexpr const char* kManagedBy = "ddp3d-operator";

// 64-bit FNV-1a; stable across platforms and releases (names depend on it).
uint64_t fnv1a64(const std::string& s);
// First 8 hex digits of fnv1a64, used as the suffix that keeps shortened names unique.
std::string short_hash(const std::string& s);

// True if s is a DNS-1123 label: [a-z0-9]([-a-z0-9]*[a-z0-9])?, at most 63 characters.
bool is_dns1123_label(const std::string& s);
// True if s is a DNS-1035 label (a DNS-1123 label that starts with a letter): Service names.
bool is_dns1035_label(const std::string& s);
// True if s is a valid label value: empty, or <=63 of [A-Za-z0-9_.-] starting/ending alnum.
bool is_label_value(const std::string& s);

// "<job>-node-<rank>", hash-truncated to a DNS-1123 label (it is also the pod's hostname).
std::string pod_name(const std::string& job, int rank);
// The headless Service (and pod subdomain): the job name as a DNS-1035 label.
std::string service_name(const std::string& job);
// "<job>-rendezvous-<attempt>": the Secret with attempt `attempt`'s rendezvous token
// (DDP3D_RENDEZVOUS_TOKEN), hash-truncated to a DNS-1123 label.
std::string rendezvous_secret_name(const std::string& job, int attempt);
// "<job>-gang-<attempt>": attempt `attempt`'s PodGroup, hash-truncated to a DNS-1123 label.
std::string pod_group_name(const std::string& job, int attempt);
// Probe pod `index` looking for room for one more node: "<job>-probe-<index>".
std::string grow_probe_name(const std::string& job, int index);
// "<job>-ranks": the job's NetworkPolicy, hash-truncated to a DNS-1123 label.
std::string network_policy_name(const std::string& job);
// "<job>-workload": the job's Kueue Workload (kueue.x-k8s.io/queue-name), hash-truncated to a
// DNS-1123 label.
std::string workload_name(const std::string& job);
// The value of the ddp3d.io/job-name label for this job (label values are <= 63 characters).
std::string job_label_value(const std::string& job);

}  // namespace ddp3d::op::api
