#include "operator/controller/job_controller.h"

#include <cstddef>
#include <ctime>
#include <exception>
#include <stdexcept>

#include "common/log.h"
#include "common/random_hex.h"
#include "operator/api/names.h"
#include "operator/api/template_policy.h"
#include "operator/api/training_job.h"
#include "operator/controller/cache_transforms.h"
#include "operator/controller/desired_objects.h"
#include "operator/controller/event_object.h"
#include "operator/controller/reconcile.h"
#include "operator/controller/slow_start.h"
#include "operator/kube/errors.h"

namespace ddp3d::op {

using web::json::value;

namespace {

// Pod requests of one job in flight at once. The API server's default max-inflight for
// mutations is 200 across all clients; 16 keeps one gang from taking a large share.
constexpr std::size_t kMaxConcurrentPodRequests = 16;

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

bool has_label(const value& obj, const char* key, const std::string& want) {
  if (!obj.has_field("metadata")) return false;
  const value& meta = obj.at("metadata");
  return meta.has_field("labels") && meta.at("labels").has_string_field(key) &&
         meta.at("labels").at(key).as_string() == want;
}

int64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace

JobController::JobController(kube::Client& client, ControllerConfig config,
                             OperatorMetrics& metrics)
    : client_(client),
      config_(std::move(config)),
      metrics_(metrics),
      written_status_(config_.expectations_timeout),
      in_flight_(config_.expectations_timeout) {
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
    controller::ProbeOptions probe;
    probe.interval = config_.progress_probe_interval;
    probe.limits.timeout = config_.progress_probe_timeout;
    probe_ = std::make_unique<controller::ProgressProbe>(
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
  for (const auto& s : scopes_) {
    for (auto* inf : {s.pods.get(), s.services.get(), s.network_policies.get(), s.jobs.get()})
      out.push_back(inf);
  }
  return out;
}

void JobController::start_informers() {
  if (informers_started_) return;
  informers_started_ = true;
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
  log::info("starting " + std::to_string(config_.workers) + " workers");
  for (int i = 0; i < config_.workers; ++i) workers_.emplace_back([this] { worker(); });
  if (probe_) probe_->start();
}

void JobController::start() {
  start_informers();
  wait_for_sync({});
  start_workers();
}

void JobController::stop_workers(bool drain) {
  if (workers_stopped_) return;
  workers_stopped_ = true;
  if (probe_) probe_->stop();  // before the queue it feeds shuts down
  if (drain) {
    queue_.shut_down();
  } else {
    queue_.shut_down_now();
  }
  workers_.clear();  // joins
}

void JobController::stop_informers() {
  if (informers_stopped_) return;
  informers_stopped_ = true;
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

std::vector<controller::ProbeTarget> JobController::probe_targets() const {
  std::vector<controller::ProbeTarget> out;
  for (const auto& s : scopes_) {
    // The port of every job worth probing, by key.
    std::map<std::string, int> ports;
    for (const auto& ptr : s.jobs->cache().list()) {
      const auto parsed = api::parse_training_job(*ptr);
      const auto phase = parsed.job.status.phase;
      if (api::is_finished(phase) || phase == api::Phase::kSuspended) continue;
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

void JobController::worker() {
  while (auto key = queue_.get()) {
    const auto t0 = std::chrono::steady_clock::now();
    try {
      process(*key);
      queue_.forget(*key);
      metrics_.reconcile_total.Add({{"result", "success"}}).Increment();
    } catch (const std::exception& e) {
      metrics_.reconcile_total.Add({{"result", "error"}}).Increment();
      log::warning("reconcile " + *key + " failed (will retry): " + e.what());
      queue_.add_rate_limited(*key);
    }
    metrics_.reconcile_duration_seconds.Observe(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    queue_.done(*key);
  }
}

void JobController::process(const std::string& key) {
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
    const std::lock_guard lock(created_mutex_);
    created_once_.erase(key);
    return;
  }
  // Until the informers show this replica's own creates and deletes, the cached pods are not
  // the whole truth; the events that show them requeue the job, the delay is a backstop.
  if (const auto wait = in_flight_.pending(key, now)) {
    queue_.add_after(key, std::chrono::duration_cast<std::chrono::milliseconds>(*wait) +
                              std::chrono::milliseconds(1));
    return;
  }
  const kube::ObjectPtr obj = written_status_.freshest(key, cached, now);
  const auto parsed = api::parse_training_job(*obj);
  const auto& job = parsed.job;

  // The owner index: this job's objects only, whatever else the caches hold.
  controller::Observed observed;
  const std::string label = api::job_label_value(name);
  for (const auto& p : scope.pods->cache().list_owned_by(job.meta.uid)) {
    if (has_label(*p, api::kLabelJobName, label)) {
      observed.pods.push_back(controller::observe_pod(*p));
      if (probe_) observed.pods.back().scrape = probe_->latest(observed.pods.back().uid);
    }
  }
  for (const auto& s : scope.services->cache().list_owned_by(job.meta.uid)) {
    if (has_label(*s, api::kLabelJobName, label)) {
      observed.services.push_back(controller::observe_service(*s));
    }
  }
  for (const auto& p : scope.network_policies->cache().list_owned_by(job.meta.uid)) {
    if (has_label(*p, api::kLabelJobName, label)) {
      observed.network_policies.push_back(controller::observe_service(*p));
    }
  }
  observed.operator_namespace = config_.operator_namespace;
  observed.pod_group_api = pod_group_api();
  if (nodes_) {
    observed.nodes_watched = true;
    for (const auto& p : observed.pods) {
      if (p.node_name.empty() || observed.nodes.count(p.node_name)) continue;
      if (const auto node = nodes_->cache().get(p.node_name)) {
        observed.nodes[p.node_name] = controller::observe_node(*node);
        continue;
      }
      const std::lock_guard lock(deleted_nodes_mutex_);
      if (deleted_nodes_.count(p.node_name)) {
        controller::ObservedNode gone;
        gone.name = p.node_name;
        gone.deleted = true;
        observed.nodes[p.node_name] = gone;
      }
    }
  }
  // The template policy needs this operator's configuration, so it runs here; its errors fail
  // the job like parse errors do (condition and Event naming the field).
  std::vector<api::FieldError> errors = parsed.errors;
  for (auto& e : api::check_template_policy(job, config_.template_policy))
    errors.push_back(std::move(e));
  const auto result = controller::reconcile(job, errors, observed, std::time(nullptr));

  if (!(result.status == job.status)) {
    value body = *obj;
    body["status"] = api::status_to_json(result.status);
    kube::ObjectPtr written;
    try {
      written = std::make_shared<const value>(
          client_.replace_status(kube::resources::training_jobs(), ns, body));
    } catch (const kube::ConflictError&) {
      // Someone wrote the job since our cache saw it. Our decision may rest on an old status,
      // so nothing is applied; the informer delivers the new version and we decide again.
      metrics_.status_conflicts_total.Increment();
      log::info(key + ": status conflict; reconciling again on the newer version");
      written_status_.forget(key);
      queue_.add_after(key, std::chrono::milliseconds(200));
      return;
    } catch (const kube::NotFoundError&) {
      return;  // deleted meanwhile
    }
    written_status_.wrote(key, body, std::move(written), controller::Clock::now());
    // Restarts for failures and for disruptions alike: each recreated the whole group.
    const int restarted = (result.status.restarts - job.status.restarts) +
                          (result.status.disruptions - job.status.disruptions);
    if (restarted > 0) {
      metrics_.gang_restarts_total.Add({{"trainingjob_namespace", ns}, {"trainingjob", name}}).Increment(restarted);
    }
    if (result.status.phase == api::Phase::kFailed && job.status.phase != api::Phase::kFailed) {
      metrics_.jobs_failed_total.Add({{"reason", result.status.reason}}).Increment();
    }
    if (result.status.phase != job.status.phase) {
      log::info(key + ": " + api::to_string(job.status.phase) + " -> " +
                api::to_string(result.status.phase) + " (" + result.status.reason + ": " +
                result.status.message + ")");
    }
  }

  // Every action is tried even when one fails, so one pod that cannot be deleted does not
  // keep the others holding GPUs; the first error then fails this pass, and the retry
  // recomputes (from what exists by then) what is still to do. A run of pod creates or
  // deletes goes out under a slow-start window (a 64-node gang in a few round trips); the
  // Service before them and the Events after them keep their order.
  std::exception_ptr first_error;
  auto apply_one = [&](const controller::Action& a) {
    try {
      apply_action(key, ns, a, job.meta);
    } catch (const std::exception& e) {
      log::warning(key + ": " + controller::to_string(a.kind) + " " + a.name +
                   " failed: " + e.what());
      throw;
    }
    metrics_.actions_total.Add({{"action", controller::to_string(a.kind)}}).Increment();
    if (a.kind != controller::Action::Kind::kEvent) {
      log::debug(key + ": " + controller::to_string(a.kind) + " " + a.name);
    }
  };
  auto is_pod_request = [](const controller::Action& a) {
    return a.kind == controller::Action::Kind::kCreatePod ||
           a.kind == controller::Action::Kind::kDeletePod;
  };
  const auto& actions = result.actions;
  for (std::size_t i = 0; i < actions.size();) {
    std::size_t end = i + 1;
    if (is_pod_request(actions[i]))
      while (end < actions.size() && is_pod_request(actions[end])) ++end;
    auto error = controller::run_slow_start(end - i, kMaxConcurrentPodRequests,
                                            [&](std::size_t k) { apply_one(actions[i + k]); });
    if (error && !first_error) first_error = error;
    i = end;
  }
  if (result.requeue_after_seconds) {
    queue_.add_after(key,
                     std::chrono::seconds(std::max<int64_t>(*result.requeue_after_seconds, 1)));
  }
  if (first_error) std::rethrow_exception(first_error);
}

void JobController::apply_action(const std::string& key, const std::string& ns,
                                 const controller::Action& a, const api::ObjectMeta& job_meta) {
  using Kind = controller::Action::Kind;
  // The expectation a request raises, lowered again unless the request succeeded: a failed
  // create or delete produces no event to meet it.
  std::string expected;
  bool expect_delete = false;
  switch (a.kind) {
    case Kind::kCreateService:
      expected = "service/" + kube::meta_name(a.object);
      break;
    case Kind::kCreatePod:
      expected = "pod/" + kube::meta_name(a.object);
      break;
    case Kind::kCreateNetworkPolicy:
      expected = "networkpolicy/" + kube::meta_name(a.object);
      break;
    case Kind::kCreateRendezvousSecret:
    case Kind::kCreatePodGroup: {
      // No informer watches these (the operator may not read them): no expectation either.
      const std::lock_guard lock(created_mutex_);
      if (created_once_[key].count(a.name)) return;
      break;
    }
    case Kind::kDeletePod:
      expected = "pod/" + a.name;
      expect_delete = true;
      break;
    case Kind::kDeleteJob:
    case Kind::kEvent:
      break;
  }
  const auto now = controller::Clock::now();
  if (!expected.empty()) {
    if (expect_delete) {
      in_flight_.expect_delete(key, expected, now);
    } else {
      in_flight_.expect_create(key, expected, now);
    }
  }
  auto lower = [&] {
    if (expected.empty()) return;
    if (expect_delete) {
      in_flight_.deleted(key, expected);
    } else {
      in_flight_.created(key, expected);
    }
  };
  try {
    switch (a.kind) {
      case Kind::kCreateService:
        client_.create(kube::resources::services(), ns, a.object);
        break;
      case Kind::kCreatePod:
        client_.create(kube::resources::pods(), ns, a.object);
        break;
      case Kind::kCreateNetworkPolicy:
        client_.create(kube::resources::network_policies(), ns, a.object);
        break;
      case Kind::kCreatePodGroup: {
        const std::string api = a.object.at("apiVersion").as_string();
        const kube::Resource group{"scheduling.k8s.io", api.substr(api.find('/') + 1), "podgroups",
                                   "PodGroup", true};
        client_.create(group, ns, a.object);
        break;
      }
      case Kind::kCreateRendezvousSecret: {
        value secret = a.object;
        secret["stringData"] = value::object();
        secret["stringData"][controller::kRendezvousTokenKey] =
            value::string(random_hex(32, "a rendezvous token"));
        client_.create(kube::resources::secrets(), ns, secret);
        break;
      }
      case Kind::kDeletePod: {
        kube::DeleteOptions opts;
        opts.precondition_uid = a.uid;
        if (a.force) opts.grace_period_seconds = 0;
        client_.remove(kube::resources::pods(), ns, a.name, opts);
        break;
      }
      case Kind::kDeleteJob: {
        kube::DeleteOptions opts;
        opts.precondition_uid = a.uid;
        opts.propagation_policy = "Background";
        client_.remove(kube::resources::training_jobs(), ns, a.name, opts);
        break;
      }
      case Kind::kEvent:
        try {
          client_.create(kube::resources::events(), ns,
                         controller::event_object(job_meta, a.event_type, a.reason, a.message,
                                                  now_ns(), config_.identity));
        } catch (const std::exception& e) {
          // Events are best effort: losing one must not stop the reconcile.
          log::warning(key + ": could not record event " + a.reason + ": " + e.what());
        }
        break;
    }
  } catch (const kube::AlreadyExistsError&) {
    // Deterministic names: it exists because an earlier pass (or replica) created it. The
    // cache may already hold it, so no event is owed.
    lower();
  } catch (const kube::NotFoundError&) {
    lower();  // already gone
  } catch (const kube::ConflictError&) {
    // Delete precondition failed: the name now belongs to a newer object; leave it.
    lower();
  } catch (...) {
    lower();
    throw;
  }
  remember_created(key, a);
}

void JobController::remember_created(const std::string& key, const controller::Action& a) {
  if (a.kind != controller::Action::Kind::kCreateRendezvousSecret &&
      a.kind != controller::Action::Kind::kCreatePodGroup) {
    return;
  }
  const std::lock_guard lock(created_mutex_);
  created_once_[key].insert(a.name);
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
