#include "operator/api/training_job.h"

#include <limits>

namespace ddp3d::op::api {

using web::json::value;

std::string join(const std::vector<FieldError>& errors) {
  std::string out;
  for (const auto& e : errors) {
    if (!out.empty()) out += "; ";
    out += e.to_string();
  }
  return out;
}

const char* to_string(RestartPolicy p) {
  switch (p) {
    case RestartPolicy::kNever:
      return "Never";
    case RestartPolicy::kOnFailure:
      return "OnFailure";
    case RestartPolicy::kExitCode:
      return "ExitCode";
  }
  return "?";
}

const char* to_string(CleanPodPolicy p) {
  switch (p) {
    case CleanPodPolicy::kNone:
      return "None";
    case CleanPodPolicy::kRunning:
      return "Running";
    case CleanPodPolicy::kAll:
      return "All";
  }
  return "?";
}

const char* to_string(Phase p) {
  switch (p) {
    case Phase::kNone:
      return "";
    case Phase::kPending:
      return "Pending";
    case Phase::kStarting:
      return "Starting";
    case Phase::kRunning:
      return "Running";
    case Phase::kRestarting:
      return "Restarting";
    case Phase::kSucceeded:
      return "Succeeded";
    case Phase::kFailed:
      return "Failed";
    case Phase::kSuspended:
      return "Suspended";
    case Phase::kQueued:
      return "Queued";
  }
  return "?";
}

std::string phase_condition_type(Phase p) {
  switch (p) {
    case Phase::kNone:
      return "";
    case Phase::kPending:
    case Phase::kStarting:
      return "Created";
    default:
      return to_string(p);
  }
}

std::optional<RestartPolicy> parse_restart_policy(const std::string& s) {
  for (auto p : {RestartPolicy::kNever, RestartPolicy::kOnFailure, RestartPolicy::kExitCode}) {
    if (s == to_string(p)) return p;
  }
  return std::nullopt;
}

std::optional<CleanPodPolicy> parse_clean_pod_policy(const std::string& s) {
  for (auto p : {CleanPodPolicy::kNone, CleanPodPolicy::kRunning, CleanPodPolicy::kAll}) {
    if (s == to_string(p)) return p;
  }
  return std::nullopt;
}

std::optional<Phase> parse_phase(const std::string& s) {
  for (auto p :
       {Phase::kNone, Phase::kPending, Phase::kStarting, Phase::kRunning, Phase::kRestarting,
        Phase::kSucceeded, Phase::kFailed, Phase::kSuspended, Phase::kQueued}) {
    if (s == to_string(p)) return p;
  }
  return std::nullopt;
}

namespace {

// Reads typed fields of one JSON object, recording a FieldError (with the full path) for every
// field present with the wrong type instead of throwing, so one bad field does not hide others.
class Reader {
 public:
  Reader(const value& object, std::string path, std::vector<FieldError>* errors)
      : object_(object), path_(std::move(path)), errors_(errors) {}

  bool has(const char* key) const {
    return object_.is_object() && object_.has_field(key) && !object_.at(key).is_null();
  }
  std::string path(const char* key) const { return path_.empty() ? key : path_ + "." + key; }
  const value& at(const char* key) const { return object_.at(key); }

  void string(const char* key, std::string* out) const {
    if (!has(key)) return;
    if (!at(key).is_string()) return error(key, "must be a string");
    *out = at(key).as_string();
  }
  void integer(const char* key, int* out) const {
    int64_t v = 0;
    if (!int64(key, &v)) return;
    if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max()) {
      return error(key, "out of range");
    }
    *out = static_cast<int>(v);
  }
  bool int64(const char* key, int64_t* out) const {
    if (!has(key)) return false;
    const value& v = at(key);
    if (!v.is_number() || !v.as_number().is_integral() || !v.as_number().is_int64()) {
      error(key, "must be an integer");
      return false;
    }
    *out = v.as_number().to_int64();
    return true;
  }
  void optional_int64(const char* key, std::optional<int64_t>* out) const {
    int64_t v = 0;
    if (int64(key, &v)) *out = v;
  }
  void optional_number(const char* key, std::optional<double>* out) const {
    if (!has(key)) return;
    if (!at(key).is_number()) return error(key, "must be a number");
    *out = at(key).as_double();
  }
  void boolean(const char* key, bool* out) const {
    if (!has(key)) return;
    if (!at(key).is_boolean()) return error(key, "must be a boolean");
    *out = at(key).as_bool();
  }
  void string_list(const char* key, std::vector<std::string>* out) const {
    if (!has(key)) return;
    if (!at(key).is_array()) return error(key, "must be a list of strings");
    const auto& arr = at(key).as_array();
    for (size_t i = 0; i < arr.size(); ++i) {
      if (!arr.at(i).is_string()) {
        errors_->push_back({path(key) + "[" + std::to_string(i) + "]", "must be a string"});
        continue;
      }
      out->push_back(arr.at(i).as_string());
    }
  }
  bool object(const char* key) const {
    if (!has(key)) return false;
    if (!at(key).is_object()) {
      error(key, "must be an object");
      return false;
    }
    return true;
  }
  void error(const char* key, const std::string& message) const {
    errors_->push_back({path(key), message});
  }

 private:
  const value& object_;
  std::string path_;
  std::vector<FieldError>* errors_;
};

void parse_run_policy(const value& v, std::vector<FieldError>* errors, RunPolicy* rp) {
  Reader r(v, "spec.runPolicy", errors);
  std::string s;
  r.string("restartPolicy", &s);
  if (!s.empty()) {
    if (auto p = parse_restart_policy(s)) {
      rp->restart_policy = *p;
    } else {
      r.error("restartPolicy", "unsupported value \"" + s + "\" (Never, OnFailure, ExitCode)");
    }
  }
  s.clear();
  r.string("cleanPodPolicy", &s);
  if (!s.empty()) {
    if (auto p = parse_clean_pod_policy(s)) {
      rp->clean_pod_policy = *p;
    } else {
      r.error("cleanPodPolicy", "unsupported value \"" + s + "\" (None, Running, All)");
    }
  }
  r.integer("backoffLimit", &rp->backoff_limit);
  r.optional_int64("activeDeadlineSeconds", &rp->active_deadline_seconds);
  r.optional_int64("ttlSecondsAfterFinished", &rp->ttl_seconds_after_finished);
  r.boolean("suspend", &rp->suspend);
  r.integer("disruptionLimit", &rp->disruption_limit);
  r.boolean("autoResume", &rp->auto_resume);
  r.optional_int64("startupDeadlineSeconds", &rp->startup_deadline_seconds);
  r.optional_int64("progressDeadlineSeconds", &rp->progress_deadline_seconds);
  r.int64("nodeLossTimeoutSeconds", &rp->node_loss_timeout_seconds);
  r.boolean("gangScheduling", &rp->gang_scheduling);
}

void parse_network(const value& v, std::vector<FieldError>* errors, NetworkSpec* network) {
  Reader r(v, "spec.network", errors);
  r.boolean("rendezvousSecret", &network->rendezvous_secret);
  r.boolean("policy", &network->policy);
  r.string_list("metricsNamespaces", &network->metrics_namespaces);
}

void parse_elastic(const value& v, std::vector<FieldError>* errors, ElasticSpec* elastic) {
  Reader r(v, "spec.elastic", errors);
  r.integer("minNodes", &elastic->min_nodes);
  r.int64("placementTimeoutSeconds", &elastic->placement_timeout_seconds);
  r.int64("growIntervalSeconds", &elastic->grow_interval_seconds);
}

void parse_spec(const value& v, std::vector<FieldError>* errors, TrainingJobSpec* spec) {
  Reader r(v, "spec", errors);
  r.integer("nnodes", &spec->nnodes);
  r.integer("gpusPerNode", &spec->gpus_per_node);
  r.integer("port", &spec->port);
  r.integer("metricsPort", &spec->metrics_port);
  r.string("config", &spec->config);
  r.string_list("args", &spec->args);
  r.string("image", &spec->image);
  if (r.has("env")) {
    if (!r.at("env").is_array()) {
      r.error("env", "must be a list of EnvVar objects");
    } else {
      for (const auto& e : r.at("env").as_array()) spec->env.push_back(e);
    }
  }
  if (r.object("template")) spec->pod_template = r.at("template");
  if (r.object("runPolicy")) parse_run_policy(r.at("runPolicy"), errors, &spec->run_policy);
  if (r.object("network")) parse_network(r.at("network"), errors, &spec->network);
  if (r.object("elastic")) {
    // An elastic block without minNodes may shrink to one node (the CRD's default).
    spec->elastic = ElasticSpec{};
    parse_elastic(r.at("elastic"), errors, &*spec->elastic);
  }
  // --- pod security (docs/security.md) ---
  std::string pod_security;
  r.string("podSecurity", &pod_security);
  if (!pod_security.empty()) {
    if (auto p = parse_pod_security(pod_security)) {
      spec->pod_security = *p;
    } else {
      r.error("podSecurity", "unsupported value \"" + pod_security + "\" (Restricted, Trusted)");
    }
  }
}

void parse_meta(const value& v, std::vector<FieldError>* errors, ObjectMeta* meta) {
  Reader r(v, "metadata", errors);
  r.string("name", &meta->name);
  r.string("namespace", &meta->namespace_);
  r.string("uid", &meta->uid);
  r.string("resourceVersion", &meta->resource_version);
  int64_t generation = 0;
  if (r.int64("generation", &generation)) meta->generation = generation;
  meta->deleting = r.has("deletionTimestamp");
  if (r.object("labels")) {
    for (const auto& [k, lv] : r.at("labels").as_object()) {
      if (lv.is_string()) meta->labels[k] = lv.as_string();
    }
  }
}

TrainingProgress progress_from_json(const value& v, std::vector<FieldError>* errors) {
  Reader r(v, "status.progress", errors);
  TrainingProgress p;
  r.integer("attempt", &p.attempt);
  r.int64("step", &p.step);
  r.optional_int64("epoch", &p.epoch);
  r.optional_int64("maxSteps", &p.max_steps);
  r.optional_number("stepsPerSecond", &p.steps_per_second);
  r.optional_int64("etaSeconds", &p.eta_seconds);
  std::string t;
  r.string("estimatedCompletionTime", &t);
  if (!t.empty()) p.estimated_completion_time = t;
  r.string("eta", &p.eta);
  r.string("lastProgressTime", &p.last_progress_time);
  return p;
}

value progress_to_json(const TrainingProgress& p) {
  value v = value::object();
  v["attempt"] = value::number(p.attempt);
  v["step"] = value::number(p.step);
  if (p.epoch) v["epoch"] = value::number(*p.epoch);
  if (p.max_steps) v["maxSteps"] = value::number(*p.max_steps);
  if (p.steps_per_second) v["stepsPerSecond"] = value::number(*p.steps_per_second);
  if (p.eta_seconds) v["etaSeconds"] = value::number(*p.eta_seconds);
  if (p.estimated_completion_time) {
    v["estimatedCompletionTime"] = value::string(*p.estimated_completion_time);
  }
  if (!p.eta.empty()) v["eta"] = value::string(p.eta);
  if (!p.last_progress_time.empty()) v["lastProgressTime"] = value::string(p.last_progress_time);
  return v;
}

StallRecord stall_from_json(const value& v, std::vector<FieldError>* errors) {
  Reader r(v, "status.lastStall", errors);
  StallRecord s;
  r.integer("attempt", &s.attempt);
  r.integer("rank", &s.rank);
  r.string("pod", &s.pod);
  r.string("node", &s.node);
  r.optional_int64("step", &s.step);
  r.string("time", &s.time);
  r.string("message", &s.message);
  return s;
}

value stall_to_json(const StallRecord& s) {
  value v = value::object();
  v["attempt"] = value::number(s.attempt);
  v["rank"] = value::number(s.rank);
  v["pod"] = value::string(s.pod);
  if (!s.node.empty()) v["node"] = value::string(s.node);
  if (s.step) v["step"] = value::number(*s.step);
  v["time"] = value::string(s.time);
  if (!s.message.empty()) v["message"] = value::string(s.message);
  return v;
}

}  // namespace

TrainingJobStatus status_from_json(const value& v, std::vector<FieldError>* errors) {
  TrainingJobStatus st;
  if (!v.is_object()) return st;
  Reader r(v, "status", errors);
  std::string phase;
  r.string("phase", &phase);
  if (auto p = parse_phase(phase)) {
    st.phase = *p;
  } else {
    r.error("phase", "unknown phase \"" + phase + "\"");
  }
  r.integer("restarts", &st.restarts);
  r.integer("disruptions", &st.disruptions);
  r.integer("attempt", &st.attempt);
  // An absent or empty timestamp leaves the field unset.
  const auto timestamp = [&r](const char* key, std::optional<std::string>* out) {
    std::string t;
    r.string(key, &t);
    if (!t.empty()) *out = t;
  };
  timestamp("startTime", &st.start_time);
  timestamp("completionTime", &st.completion_time);
  timestamp("attemptStartTime", &st.attempt_start_time);
  if (r.object("progress")) st.progress = progress_from_json(r.at("progress"), errors);
  if (r.object("lastStall")) st.last_stall = stall_from_json(r.at("lastStall"), errors);
  r.integer("size", &st.size);
  timestamp("sizeSince", &st.size_since);
  timestamp("nextGrowTime", &st.next_grow_time);
  timestamp("growProbeTime", &st.grow_probe_time);
  int64_t og = 0;
  if (r.int64("observedGeneration", &og)) st.observed_generation = og;
  if (r.has("conditions") && r.at("conditions").is_array()) {
    for (const auto& c : r.at("conditions").as_array()) {
      Reader cr(c, "status.conditions[]", errors);
      Condition cond;
      cr.string("type", &cond.type);
      cr.string("status", &cond.status);
      cr.string("reason", &cond.reason);
      cr.string("message", &cond.message);
      cr.string("lastTransitionTime", &cond.last_transition_time);
      cr.int64("observedGeneration", &cond.observed_generation);
      st.conditions.push_back(std::move(cond));
    }
  }
  if (r.has("nodes") && r.at("nodes").is_array()) {
    for (const auto& n : r.at("nodes").as_array()) {
      Reader nr(n, "status.nodes[]", errors);
      NodeStatus node;
      nr.integer("rank", &node.rank);
      nr.string("pod", &node.pod);
      nr.string("phase", &node.phase);
      int code = 0;
      if (nr.has("exitCode")) {
        nr.integer("exitCode", &code);
        node.exit_code = code;
      }
      nr.string("reason", &node.reason);
      nr.string("uid", &node.uid);
      nr.string("message", &node.message);
      nr.optional_int64("step", &node.step);
      nr.string("node", &node.node);
      st.nodes.push_back(std::move(node));
    }
  }
  // reason/message are not stored on their own: they are those of the phase's condition.
  const std::string type = phase_condition_type(st.phase);
  for (const auto& c : st.conditions) {
    if (c.type == type && c.status == "True") {
      st.reason = c.reason;
      st.message = c.message;
    }
  }
  return st;
}

value status_to_json(const TrainingJobStatus& st) {
  value v = value::object();
  v["phase"] = value::string(to_string(st.phase));
  v["restarts"] = value::number(st.restarts);
  v["disruptions"] = value::number(st.disruptions);
  v["attempt"] = value::number(st.attempt);
  if (st.start_time) v["startTime"] = value::string(*st.start_time);
  if (st.completion_time) v["completionTime"] = value::string(*st.completion_time);
  if (st.attempt_start_time) v["attemptStartTime"] = value::string(*st.attempt_start_time);
  if (st.progress) v["progress"] = progress_to_json(*st.progress);
  if (st.last_stall) v["lastStall"] = stall_to_json(*st.last_stall);
  if (st.size > 0) v["size"] = value::number(st.size);
  if (st.size_since) v["sizeSince"] = value::string(*st.size_since);
  if (st.next_grow_time) v["nextGrowTime"] = value::string(*st.next_grow_time);
  if (st.grow_probe_time) v["growProbeTime"] = value::string(*st.grow_probe_time);
  v["observedGeneration"] = value::number(st.observed_generation);
  value conditions = value::array();
  for (size_t i = 0; i < st.conditions.size(); ++i) {
    const auto& c = st.conditions[i];
    value cv = value::object();
    cv["type"] = value::string(c.type);
    cv["status"] = value::string(c.status);
    // metav1.Condition: reason and message are required (message may be empty).
    cv["reason"] = value::string(c.reason);
    cv["message"] = value::string(c.message);
    cv["lastTransitionTime"] = value::string(c.last_transition_time);
    cv["observedGeneration"] = value::number(c.observed_generation);
    conditions[i] = cv;
  }
  v["conditions"] = conditions;
  value nodes = value::array();
  for (size_t i = 0; i < st.nodes.size(); ++i) {
    const auto& n = st.nodes[i];
    value nv = value::object();
    nv["rank"] = value::number(n.rank);
    nv["pod"] = value::string(n.pod);
    nv["phase"] = value::string(n.phase);
    if (n.exit_code) nv["exitCode"] = value::number(*n.exit_code);
    if (!n.reason.empty()) nv["reason"] = value::string(n.reason);
    if (!n.uid.empty()) nv["uid"] = value::string(n.uid);
    if (!n.message.empty()) nv["message"] = value::string(n.message);
    if (n.step) nv["step"] = value::number(*n.step);
    if (!n.node.empty()) nv["node"] = value::string(n.node);
    nodes[i] = nv;
  }
  v["nodes"] = nodes;
  return v;
}

ParsedTrainingJob parse_training_job(const value& object) {
  ParsedTrainingJob out;
  if (!object.is_object()) {
    out.errors.push_back({"", "TrainingJob must be a JSON object"});
    return out;
  }
  Reader r(object, "", &out.errors);
  if (r.object("metadata")) parse_meta(r.at("metadata"), &out.errors, &out.job.meta);
  if (r.object("spec")) {
    parse_spec(r.at("spec"), &out.errors, &out.job.spec);
  } else if (!r.has("spec")) {
    out.errors.push_back({"spec", "required"});
  }
  if (r.has("status")) {
    // Status errors come from our own writes; they must not fail the job, so they are dropped.
    std::vector<FieldError> ignored;
    out.job.status = status_from_json(r.at("status"), &ignored);
  }
  return out;
}

}  // namespace ddp3d::op::api
