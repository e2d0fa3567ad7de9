#include "operator/runtime/job_controller.h"

#include <algorithm>
#include <ctime>
#include <stdexcept>

#include "common/log.h"
#include "operator/act/status_writer.h"
#include "operator/api/names.h"
#include "operator/api/template_policy.h"
#include "operator/api/training_job.h"
#include "operator/controller/cache_transforms.h"
#include "operator/controller/kueue_workload.h"
#include "operator/controller/reconcile.h"
#include "operator/kube/errors.h"
#include "operator/observe/job_observer.h"

namespace ddp3d::op {

using web::json::value;

namespace {

// "ns/name" of the TrainingJob that controls `child`, or "" if none.
std::string owner_key(const value& child) {
  if (!child.has_field("metadata")) return "";
  const value& meta = child.at("metadata");
  if (!meta.has_field("ownerReferences") || !meta.at("ownerReferences").is_array()) return "";
  for (const auto& ref : meta.at("ownerReferences").as_array()) {
    if (!ref.has_field("controller") || !ref.at("controller").is_boolean() ||
        !ref.at("controller").as_bool()) {
      continue;
    }
    if (ref.has_field("kind") && ref.at("kind").as_string() == api::kKind &&
        ref.has_field("name")) {
      return kube::object_key(kube::meta_namespace(child), ref.at("name").as_string());
    }
  }
  return "";
}

}  // namespace

JobController::JobController(kube::Client& client, ControllerConfig config,
                             OperatorMetrics& metrics)
    : client_(client),
      config_(std::move(config)),
      metrics_(metrics),
      written_status_(config_.expectations_timeout),
      in_flight_(config_.expectations_timeout),
      kueue_(std::make_unique<runtime::KueueInformers>(
          client_, config_.namespaces, config_.kueue,
          [this](const value& w, bool gone) { on_child_event("workload", w, gone); })),
      actions_(client_, in_flight_, config_.identity),
      work_loop_(queue_, metrics_, [this](const std::string& key) { return reconcile(key); }) {
  std::vector<std::string> namespaces = config_.namespaces;
  if (namespaces.empty()) namespaces.push_back("");
  kube::Informer::Options job_opts;
  job_opts.resync_period = config_.resync;
  job_opts.transform = controller::slim_training_job;
  kube::Informer::Options pod_opts;
  // Only what the operator owns: every derived object carries the job-name label.
  pod_opts.label_selector = api::kLabelJobName;
  pod_opts.transform = controller::slim_pod;
  kube::Informer::Options service_opts = pod_opts;
  service_opts.transform = controller::slim_service;
  for (const auto& ns : namespaces) {
    Scope s;
    s.ns = ns;
    s.jobs =
        std::make_unique<kube::Informer>(client_, kube::resources::training_jobs(), ns, job_opts);
    s.pods = std::make_unique<kube::Informer>(client_, kube::resources::pods(), ns, pod_opts);
    s.services =
        std::make_unique<kube::Informer>(client_, kube::resources::services(), ns, service_opts);
    // Metadata is all reconcile reads of a NetworkPolicy, as of a Service.
    s.network_policies = std::make_unique<kube::Informer>(
        client_, kube::resources::network_policies(), ns, service_opts);
    auto enqueue_job = [this](const value& obj) { queue_.add(kube::object_key(obj)); };
    s.jobs->add_handlers({enqueue_job,
                          [enqueue_job](const value&, const value& n) { enqueue_job(n); },
                          enqueue_job});
    auto watch_children = [this](kube::Informer& inf, const char* kind) {
      inf.add_handlers({[this, kind](const value& obj) { on_child_event(kind, obj, false); },
                        [this, kind](const value&, const value& n) {
                          // A deletionTimestamp is the server's answer to our DELETE.
                          const bool deleting = n.has_field("metadata") &&
                                                n.at("metadata").has_field("deletionTimestamp");
                          on_child_event(kind, n, deleting);
                        },
                        [this, kind](const value& obj) { on_child_event(kind, obj, true); }});
    };
    watch_children(*s.pods, "pod");
    watch_children(*s.services, "service");
    watch_children(*s.network_policies, "networkpolicy");
    scopes_.push_back(std::move(s));
  }
  if (config_.watch_nodes) {
    kube::Informer::Options node_opts;
    node_opts.transform = controller::slim_node;
    nodes_ = std::make_unique<kube::Informer>(client_, kube::resources::nodes(), "", node_opts);
    nodes_->add_handlers(
        {[this](const value& node) {
           const std::lock_guard lock(deleted_nodes_mutex_);
           deleted_nodes_.erase(kube::meta_name(node));
         },
         [this](const value& old_node, const value& node) {
           // Most Node updates are heartbeats; only Ready matters here.
           if (!(controller::observe_node(old_node) == controller::observe_node(node))) {
             on_node_event(node);
           }
         },
         [this](const value& node) {
           {
             const std::lock_guard lock(deleted_nodes_mutex_);
             // Bounded: names of nodes long gone stop mattering once their
             // pods are gone (PodGC removes them).
             if (deleted_nodes_.size() >= 4096) deleted_nodes_.clear();
             deleted_nodes_.insert(kube::meta_name(node));
           }
           on_node_event(node);
         }});
  }
  if (config_.progress_probe_interval.count() > 0) {
    probe::ProbeOptions probe;
    probe.interval = config_.progress_probe_interval;
    probe.limits.timeout = config_.progress_probe_timeout;
    probe_ = std::make_unique<probe::ProgressProbe>(
        probe, [this] { return probe_targets(); },
        [this](const std::string& key) { queue_.add(key); });
  }
}

JobController::~JobController() {
  stop();
}

void JobController::on_child_event(const char* kind, const value& child, bool gone) {
  const std::string key = owner_key(child);
  if (key.empty()) return;
  const std::string object = std::string(kind) + "/" + kube::meta_name(child);
  in_flight_.created(key, object);  // any event for it shows the create landed
  if (gone) in_flight_.deleted(key, object);
  queue_.add(key);
}

void JobController::on_node_event(const value& node) {
  const std::string name = kube::meta_name(node);
  for (const auto& s : scopes_) {
    for (const auto& ptr : s.pods->cache().list()) {
      const value& pod = *ptr;
      if (!pod.has_field("spec") || !pod.at("spec").has_string_field("nodeName") ||
          pod.at("spec").at("nodeName").as_string() != name) {
        continue;
      }
      if (const std::string key = owner_key(pod); !key.empty()) queue_.add(key);
    }
  }
}

std::vector<kube::Informer*> JobController::informers() const {
  std::vector<kube::Informer*> out;
  if (nodes_) out.push_back(nodes_.get());
  for (auto* inf : kueue_->informers()) out.push_back(inf);
  for (const auto& s : scopes_) {
    for (auto* inf : {s.pods.get(), s.services.get(), s.network_policies.get(), s.jobs.get()})
      out.push_back(inf);
  }
  return out;
}

void JobController::start_informers() {
  if (informers_started_) return;
  informers_started_ = true;
  kueue_->discover();
  for (auto* inf : informers()) inf->start();
}

bool JobController::wait_for_sync(const std::stop_token& stop) {
  const auto deadline = std::chrono::steady_clock::now() + config_.sync_timeout;
  for (auto* inf : informers()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (inf->wait_for_sync(std::max(left, std::chrono::milliseconds(1)), stop)) continue;
    if (stop.stop_requested()) return false;
    const std::string& ns = inf->watched_namespace();
    throw std::runtime_error(
        "cache of " + inf->resource().plural + " in " +
        (!inf->resource().namespaced ? std::string("the cluster")
         : ns.empty()                ? std::string("all namespaces")
                                     : ns) +
        " did not sync within " + std::to_string(config_.sync_timeout.count()) +
        "s (is the API server reachable, and may this account list and watch it?" +
        (inf == nodes_.get() ? " Without that right, run with --watch-nodes=false" : "") + ")");
  }
  log::info("caches synced");
  return true;
}

void JobController::start_workers() {
  if (workers_started_) return;
  workers_started_ = true;
  work_loop_.start(config_.workers);
  if (probe_) probe_->start();
}

void JobController::start() {
  start_informers();
  wait_for_sync({});
  start_workers();
}

void JobController::stop_workers(bool drain) {
  if (probe_) probe_->stop();  // before the queue it feeds shuts down
  work_loop_.stop(drain);
}

void JobController::stop_informers() {
  if (informers_stopped_) return;
  informers_stopped_ = true;
  kueue_->stop();
  for (auto* inf : informers()) inf->stop();
}

void JobController::stop() {
  stop_workers(true);
  stop_informers();
}

bool JobController::synced() const {
  for (const auto* inf : informers()) {
    if (!inf->has_synced()) return false;
  }
  return informers_started_;
}

std::size_t JobController::queue_depth() const {
  return queue_.len() + queue_.delayed_len();
}

std::map<std::string, double> JobController::jobs_by_phase() const {
  std::map<std::string, double> out;
  for (const auto& s : scopes_) {
    for (const auto& ptr : s.jobs->cache().list()) {
      const value& obj = *ptr;
      std::string phase;
      if (obj.has_field("status") && obj.at("status").has_field("phase") &&
          obj.at("status").at("phase").is_string()) {
        phase = obj.at("status").at("phase").as_string();
      }
      out[phase.empty() ? "New" : phase] += 1;
    }
  }
  return out;
}

std::vector<probe::ProbeTarget> JobController::probe_targets() const {
  std::vector<probe::ProbeTarget> out;
  for (const auto& s : scopes_) {
    // The port of every job worth probing, by key.
    std::map<std::string, int> ports;
    for (const auto& ptr : s.jobs->cache().list()) {
      const auto parsed = api::parse_training_job(*ptr);
      const auto phase = parsed.job.status.phase;
      if (api::is_finished(phase) || phase == api::Phase::kSuspended ||
          phase == api::Phase::kQueued) {
        continue;
      }
      ports[kube::object_key(*ptr)] = parsed.job.spec.metrics_port;
    }
    if (ports.empty()) continue;
    for (const auto& ptr : s.pods->cache().list()) {
      const controller::ObservedPod pod = controller::observe_pod(*ptr);
      if (pod.phase != "Running" || pod.pod_ip.empty() || pod.deleting) continue;
      const auto port = ports.find(owner_key(*ptr));
      if (port == ports.end()) continue;
      out.push_back({port->first, pod.uid, pod.pod_ip, port->second});
    }
  }
  return out;
}

const JobController::Scope& JobController::scope_for(const std::string& ns) const {
  for (const auto& s : scopes_) {
    if (s.ns.empty() || s.ns == ns) return s;
  }
  throw std::logic_error("no informer for namespace " + ns);
}

void JobController::let_go_of_workloads(const std::string& ns, const std::string& name) {
  const auto view = kueue_->view(ns);
  if (!view.served) return;
  for (const auto& w :
       view.workloads->list_matching({{api::kLabelJobName, api::job_label_value(name)}}, ns)) {
    const auto observed = controller::kueue::observe_workload(*w);
    if (!observed.deleting || !observed.has_finalizer) continue;
    const controller::RemoveWorkloadFinalizer a{
        observed.name, observed.resource_version,
        controller::kueue::finalizers_without_ours(observed)};
    api::ObjectMeta meta;
    meta.name = name;
    meta.namespace_ = ns;
    actions_.apply(kube::object_key(ns, name), meta, a);
  }
}

bool JobController::node_deleted(const std::string& node) {
  const std::lock_guard lock(deleted_nodes_mutex_);
  return deleted_nodes_.count(node) > 0;
}

runtime::ReconcileOutcome JobController::reconcile(const std::string& key) {
  using std::chrono::duration_cast;
  using std::chrono::milliseconds;
  const auto slash = key.find('/');
  const std::string ns = key.substr(0, slash);
  const std::string name = key.substr(slash + 1);
  const Scope& scope = scope_for(ns);
  const auto now = controller::Clock::now();
  auto cached = scope.jobs->cache().get(key);
  if (!cached) {
    // Deleted: the garbage collector removes its pods and Service via owner references.
    written_status_.forget(key);
    in_flight_.forget(key);
    actions_.forget(key);
    let_go_of_workloads(ns, name);
    return {};
  }
  // Until the informers show this replica's own creates and deletes, the cached pods are not
  // the whole truth; the events that show them requeue the job, the delay is a backstop.
  if (const auto wait = in_flight_.pending(key, now)) {
    return {duration_cast<milliseconds>(*wait) + milliseconds(1), nullptr};
  }
  const kube::ObjectPtr obj = written_status_.freshest(key, cached, now);
  const auto parsed = api::parse_training_job(*obj);
  const auto& job = parsed.job;

  // Observe.
  observe::JobSources sources;
  sources.pods = &scope.pods->cache();
  sources.services = &scope.services->cache();
  sources.network_policies = &scope.network_policies->cache();
  if (nodes_) {
    sources.nodes = &nodes_->cache();
    sources.node_deleted = [this](const std::string& node) { return node_deleted(node); };
  }
  if (probe_) {
    sources.scrape = [this](const std::string& uid) { return probe_->latest(uid); };
  }
  sources.operator_namespace = config_.operator_namespace;
  sources.pod_group_api = pod_group_api();
  if (job.meta.labels.count(controller::kueue::kQueueNameLabel)) {
    const auto view = kueue_->view(ns);
    if (view.syncing) return {milliseconds(500), nullptr};
    sources.kueue_disabled = !config_.kueue;
    sources.kueue_served = view.served;
    sources.workloads = view.workloads;
    sources.resource_flavors = view.resource_flavors;
    sources.priority_of = [this](const std::string& pc) { return kueue_->priority_of(pc); };
  }
  const controller::Observed observed = observe::observe_job(job, sources);

  // Decide. The template policy needs this operator's configuration, so it runs here; its
  // errors fail the job like parse errors do (condition and Event naming the field).
  std::vector<api::FieldError> errors = parsed.errors;
  for (auto& e : api::check_template_policy(job, config_.template_policy))
    errors.push_back(std::move(e));
  const auto result = controller::reconcile(job, errors, observed, std::time(nullptr));

  // Act: status first, then the actions.
  if (!(result.status == job.status)) {
    act::StatusWrite w = act::write_status(client_, *obj, result.status);
    if (w.outcome == act::StatusWrite::Outcome::kGone) return {};
    if (w.outcome == act::StatusWrite::Outcome::kConflict) {
      // Nothing of a decision made on an old status is applied; the informer delivers the new
      // version and we decide again.
      metrics_.status_conflicts_total.Increment();
      log::info(key + ": status conflict; reconciling again on the newer version");
      written_status_.forget(key);
      return {milliseconds(200), nullptr};
    }
    written_status_.wrote(key, w.sent, std::move(w.written), controller::Clock::now());
    record_status_change(key, job.status, result.status);
  }
  runtime::ReconcileOutcome outcome;
  outcome.error = actions_.apply_all(
      key, job.meta, result.actions,
      [this](const controller::Action& a) { metrics_.action(controller::kind_of(a)).Increment(); });
  if (result.requeue_after_seconds) {
    outcome.requeue_after =
        std::chrono::seconds(std::max<int64_t>(*result.requeue_after_seconds, 1));
  }
  return outcome;
}

void JobController::record_status_change(const std::string& key,
                                         const api::TrainingJobStatus& before,
                                         const api::TrainingJobStatus& after) {
  const auto slash = key.find('/');
  // Restarts for failures and for disruptions alike: each recreated the whole group.
  const int restarted =
      (after.restarts - before.restarts) + (after.disruptions - before.disruptions);
  if (restarted > 0) {
    metrics_.gang_restarts(key.substr(0, slash), key.substr(slash + 1)).Increment(restarted);
  }
  if (after.phase == api::Phase::kFailed && before.phase != api::Phase::kFailed) {
    metrics_.job_failed(after.reason).Increment();
  }
  if (after.phase != before.phase) {
    log::info(key + ": " + api::to_string(before.phase) + " -> " + api::to_string(after.phase) +
              " (" + after.reason + ": " + after.message + ")");
  }
}

std::string JobController::pod_group_api() {
  const std::lock_guard lock(discovery_mutex_);
  if (pod_group_api_) return *pod_group_api_;
  // Newest first: v1alpha2 (Kubernetes 1.36, alpha) and v1beta1 (1.37) have the same shape.
  value group;
  try {
    group = client_.request("GET", "/apis/scheduling.k8s.io");
  } catch (const kube::NotFoundError&) {
    group = value::object();
  }
  std::set<std::string> served;
  if (group.has_field("versions") && group.at("versions").is_array()) {
    for (const auto& v : group.at("versions").as_array()) {
      if (v.has_string_field("version")) served.insert(v.at("version").as_string());
    }
  }
  std::string found;
  for (const char* version : {"v1beta1", "v1alpha2"}) {
    if (!served.count(version)) continue;
    const value list = client_.request("GET", std::string("/apis/scheduling.k8s.io/") + version);
    if (!list.has_field("resources") || !list.at("resources").is_array()) continue;
    for (const auto& r : list.at("resources").as_array()) {
      if (r.has_string_field("name") && r.at("name").as_string() == "podgroups") {
        found = std::string("scheduling.k8s.io/") + version;
        break;
      }
    }
    if (!found.empty()) break;
  }
  if (found.empty()) {
    log::warning(
        "the cluster serves no PodGroup API (scheduling.k8s.io v1beta1 or v1alpha2): jobs' pods "
        "are placed one by one, not all-or-nothing (each job's GangScheduling condition says so)");
  } else {
    log::info("gang placement: one PodGroup per attempt (" + found + ")");
  }
  pod_group_api_ = found;
  return found;
}

}  // namespace ddp3d::op
