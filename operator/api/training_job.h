// TrainingJob (ddp3d.io/v1alpha1): the typed form of the custom resource the operator
// reconciles. Parsing fills the defaults the CRD schema declares, so the controller behaves the
// same whether or not the API server applied them (defence in depth).
#pragma once

#include <cpprest/json.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "operator/api/field_error.h"
#include "operator/api/pod_security.h"

namespace ddp3d::op::api {

inline constexpr const char* kGroup = "ddp3d.io";
inline constexpr const char* kVersion = "v1alpha1";
inline constexpr const char* kApiVersion = "ddp3d.io/v1alpha1";
inline constexpr const char* kKind = "TrainingJob";
inline constexpr const char* kPlural = "trainingjobs";

enum class RestartPolicy { kNever, kOnFailure, kExitCode };
enum class CleanPodPolicy { kNone, kRunning, kAll };
enum class Phase {
  kNone,
  kPending,
  kStarting,
  kRunning,
  kRestarting,
  kSucceeded,
  kFailed,
  kSuspended,
  // Labelled kueue.x-k8s.io/queue-name and not admitted by Kueue (yet, or again after an
  // eviction): no pods.
  kQueued
};

const char* to_string(RestartPolicy p);
const char* to_string(CleanPodPolicy p);
const char* to_string(Phase p);
std::optional<RestartPolicy> parse_restart_policy(const std::string& s);
std::optional<CleanPodPolicy> parse_clean_pod_policy(const std::string& s);
std::optional<Phase> parse_phase(const std::string& s);
// The condition that carries the reason and message of a phase: "Created" while Pending or
// Starting, the phase's own name otherwise.
std::string phase_condition_type(Phase p);
inline bool is_finished(Phase p) {
  return p == Phase::kSucceeded || p == Phase::kFailed;
}

inline constexpr int kDefaultDisruptionLimit = 10;
inline constexpr int kMaxDisruptionLimit = 1000;
// Upper bound of startupDeadlineSeconds and progressDeadlineSeconds (one year), so deadline
// arithmetic on Unix seconds cannot overflow.
inline constexpr int64_t kMaxRunPolicyDeadlineSeconds = 31536000;
// runPolicy.nodeLossTimeoutSeconds: added to the cluster's own node-monitor grace period (the
// time before the node lifecycle controller marks a silent node Unknown, 50 s by default).
inline constexpr int64_t kDefaultNodeLossTimeoutSeconds = 30;

struct RunPolicy {
  RestartPolicy restart_policy = RestartPolicy::kOnFailure;
  int backoff_limit = 3;
  std::optional<int64_t> active_deadline_seconds;
  std::optional<int64_t> ttl_seconds_after_finished;
  CleanPodPolicy clean_pod_policy = CleanPodPolicy::kRunning;
  bool suspend = false;
  // --- disruptions ---
  // Gang restarts caused by disruptions (a pod deleted from outside, evicted, preempted, or
  // lost with its node) allowed before the job fails; they do not count against backoffLimit.
  int disruption_limit = kDefaultDisruptionLimit;
  // The operator's command adds `--resume auto` (unless spec.args has a --resume): a new
  // attempt continues from the newest checkpoint, one saved on SIGTERM included.
  bool auto_resume = true;
  // --- progress and startup ---
  // The job fails (StartupDeadlineExceeded) when an attempt's pods are not all Running this
  // many seconds after the attempt's first pod was created.
  std::optional<int64_t> startup_deadline_seconds;
  // A Running job whose training steps have not advanced for this long (from the last advance,
  // or from all pods Running) restarts the gang (ProgressDeadlineExceeded, counted against
  // backoffLimit).
  std::optional<int64_t> progress_deadline_seconds;
  // --- node loss (docs/operator.md, "Node loss") ---
  // A pod of the current attempt whose node has not been Ready for this long (Ready False or
  // Unknown, or the Node deleted) is lost: the gang restarts without it (a disruption) and the
  // pods left on that node are force-deleted, so none of them blocks the next attempt.
  int64_t node_loss_timeout_seconds = kDefaultNodeLossTimeoutSeconds;
  // --- placement (docs/operator.md, "Gang placement") ---
  // Each attempt's pods are placed all together or not at all: a PodGroup (minCount = the
  // pods) that every pod names, where the cluster serves the API; false places them one by one.
  bool gang_scheduling = true;
};

// spec.elastic (docs/operator.md, "Elastic size"): the job may run on fewer nodes than nnodes.
inline constexpr int64_t kDefaultPlacementTimeoutSeconds = 60;
inline constexpr int64_t kDefaultGrowIntervalSeconds = 300;
struct ElasticSpec {
  // The fewest nodes the job runs on (1 <= min_nodes <= nnodes).
  int min_nodes = 1;
  // An attempt whose pods are not all placed on nodes this long after its first pod was
  // created restarts one node smaller (down to min_nodes).
  int64_t placement_timeout_seconds = kDefaultPlacementTimeoutSeconds;
  // A job below nnodes looks for room to grow (probe pods) this long after its last resize,
  // and again this long after a probe that found none.
  int64_t grow_interval_seconds = kDefaultGrowIntervalSeconds;
  bool operator==(const ElasticSpec&) const = default;
};

// spec.network (docs/security.md, "Network").
inline constexpr std::size_t kMaxMetricsNamespaces = 16;
struct NetworkSpec {
  // Each attempt gets a Secret with a fresh token that its pods receive as
  // DDP3D_RENDEZVOUS_TOKEN; the ranks refuse a rendezvous peer without it.
  bool rendezvous_secret = true;
  // A NetworkPolicy admitting traffic to the job's pods only from the job's own pods, and to
  // their metrics ports also from the operator's namespace and metrics_namespaces.
  bool policy = false;
  std::vector<std::string> metrics_namespaces;
};

struct TrainingJobSpec {
  int nnodes = 1;
  int gpus_per_node = 0;
  int port = 29500;
  // Local rank r of every worker serves /metrics on metrics_port + r (DDP3D_METRICS_PORT).
  int metrics_port = 9400;
  std::string config;
  std::vector<std::string> args;
  std::string image;
  // Kubernetes EnvVar objects, kept whole so valueFrom/secretKeyRef pass through untouched.
  std::vector<web::json::value> env;
  // PodTemplateSpec pass-through ({} when absent).
  web::json::value pod_template = web::json::value::object();
  RunPolicy run_policy;
  // --- pod security (docs/security.md) ---
  PodSecurity pod_security = PodSecurity::kRestricted;
  NetworkSpec network;
  // Unset: the job always runs on nnodes nodes.
  std::optional<ElasticSpec> elastic;
};

// The fewest nodes `spec` may run on: elastic.minNodes, or nnodes when not elastic.
inline int min_nodes(const TrainingJobSpec& spec) {
  return spec.elastic ? spec.elastic->min_nodes : spec.nnodes;
}

struct ObjectMeta {
  std::string name;
  std::string namespace_;
  std::string uid;
  std::string resource_version;
  int64_t generation = 0;
  bool deleting = false;  // deletionTimestamp is set
  std::map<std::string, std::string> labels;
};

struct Condition {
  std::string type;
  std::string status;  // "True" | "False" | "Unknown"
  std::string reason;
  std::string message;
  std::string last_transition_time;  // RFC 3339
  // metadata.generation of the job when the condition was last computed (metav1.Condition).
  int64_t observed_generation = 0;
  bool operator==(const Condition&) const = default;
};

struct NodeStatus {
  int rank = 0;
  std::string pod;
  std::string phase;  // the pod's phase, or "Missing" before it exists
  std::optional<int> exit_code;
  std::string reason;
  // uid of the rank's pod in the current attempt once observed, so that a pod which vanished
  // (deleted from outside, or garbage-collected with its node) is told from one not yet seen.
  std::string uid;
  // Why the pod is stuck before running (the container's waiting message, the scheduler's),
  // or why its /metrics did not answer.
  std::string message;
  std::optional<int64_t> step;  // training steps the rank reported at its last scrape
  std::string node{};           // the pod's spec.nodeName once scheduled
  bool operator==(const NodeStatus&) const = default;
};

// Training progress observed by the operator from the ranks' /metrics (docs/crd.md).
struct TrainingProgress {
  int attempt = 0;   // attempt whose pods reported it
  int64_t step = 0;  // training steps done: the lowest over the ranks that answered
  std::optional<int64_t> epoch;
  std::optional<int64_t> max_steps;        // planned steps (ddp3d_train_max_steps), if known
  std::optional<double> steps_per_second;  // smoothed over the advances seen
  std::optional<int64_t> eta_seconds;      // from last_progress_time to the last step
  std::optional<std::string> estimated_completion_time;  // RFC 3339
  std::string eta;                 // eta_seconds for people ("1h05m"), the ETA printer column
  std::string last_progress_time;  // RFC 3339: when step was last seen advancing
  bool operator==(const TrainingProgress&) const = default;
};

// The rank blamed for the last ProgressDeadlineExceeded restart.
struct StallRecord {
  int attempt = 0;
  int rank = 0;
  std::string pod;
  std::string node;  // the pod's spec.nodeName
  std::optional<int64_t> step;
  std::string time;  // RFC 3339
  std::string message;
  bool operator==(const StallRecord&) const = default;
};

struct TrainingJobStatus {
  Phase phase = Phase::kNone;
  // Cause and detail of the current phase. Not stored as fields of their own: they are the
  // reason and message of the phase's condition (phase_condition_type), which the CRD keeps.
  std::string reason;
  std::string message;
  std::vector<Condition> conditions;
  std::vector<NodeStatus> nodes;
  int restarts = 0;
  // Gang restarts caused by disruptions (runPolicy.disruptionLimit); restarts does not count
  // them.
  int disruptions = 0;
  // Restart attempt whose pods are current; bumped by every gang restart and by resume.
  int attempt = 0;
  std::optional<std::string> start_time;       // RFC 3339
  std::optional<std::string> completion_time;  // RFC 3339
  // When the current attempt's first pod was created (runPolicy.startupDeadlineSeconds).
  std::optional<std::string> attempt_start_time;  // RFC 3339
  std::optional<TrainingProgress> progress;
  std::optional<StallRecord> last_stall;
  // Nodes the current attempt runs on (spec.elastic); 0 before the first attempt.
  int size = 0;
  // When size last changed (RFC 3339): the grow interval counts from it.
  std::optional<std::string> size_since;
  // When a job below nnodes next looks for room to grow (RFC 3339).
  std::optional<std::string> next_grow_time;
  // When the probe for room to grow that is under way started (RFC 3339); unset when none is.
  std::optional<std::string> grow_probe_time;
  int64_t observed_generation = 0;
  bool operator==(const TrainingJobStatus&) const = default;
};

struct TrainingJob {
  ObjectMeta meta;
  TrainingJobSpec spec;
  TrainingJobStatus status;
};

struct ParsedTrainingJob {
  TrainingJob job;
  // Type errors found while parsing (wrong JSON type, unknown enum value), with field paths.
  std::vector<FieldError> errors;
};

// Parses a TrainingJob object as returned by the API server, filling defaults.
ParsedTrainingJob parse_training_job(const web::json::value& object);

// The status subresource body: {"status": {...}} carries what status_to_json writes.
web::json::value status_to_json(const TrainingJobStatus& status);
TrainingJobStatus status_from_json(const web::json::value& status, std::vector<FieldError>* errors);

}  // namespace ddp3d::op::api
