#include "operator/controller/reconcile.h"

#include <algorithm>
#include <map>
#include <set>

#include "operator/api/names.h"
#include "operator/api/validation.h"
#include "operator/controller/conditions.h"
#include "operator/controller/desired_objects.h"
#include "operator/controller/node_loss.h"
#include "operator/controller/pod_failure.h"
#include "operator/controller/progress.h"
#include "operator/controller/stuck_pods.h"

namespace ddp3d::op::controller {

namespace {

using api::Phase;

// Failed reason of a job stopped by activeDeadlineSeconds: every later pass keeps deleting its
// pods (whatever cleanPodPolicy says) until none is left.
constexpr const char* kReasonDeadlineExceeded = "DeadlineExceeded";
// Failed: an attempt's pods were not all Running within runPolicy.startupDeadlineSeconds.
// Its pods are deleted like those of DeadlineExceeded: a partial gang must not hold GPUs.
constexpr const char* kReasonStartupDeadlineExceeded = "StartupDeadlineExceeded";
// Gang restart (counted against backoffLimit): steps stopped advancing for
// runPolicy.progressDeadlineSeconds.
constexpr const char* kReasonProgressDeadlineExceeded = "ProgressDeadlineExceeded";

// What made the gang restart: counted against backoffLimit or against disruptionLimit.
enum class RestartCause { kFailure, kDisruption };

// A pod of the current attempt lost to a disruption (see disruption_of).
struct Disruption {
  int rank = 0;
  std::string pod;
  std::string what;        // "deleted from outside the operator", "evicted (...)", ...
  bool node_lost = false;  // its node is lost (runPolicy.nodeLossTimeoutSeconds)
};

bool terminated(const ObservedPod& p) {
  return p.phase == "Succeeded" || p.phase == "Failed";
}

std::string describe_failure(const ObservedPod& p) {
  std::string s = "node " + std::to_string(p.rank) + " (pod " + p.name + ") failed";
  if (p.exit_code) s += " with exit code " + std::to_string(*p.exit_code);
  if (!p.reason.empty()) s += " (" + p.reason + ")";
  return s;
}

class Reconciler {
 public:
  Reconciler(const api::TrainingJob& job, const Observed& observed, api::UnixSeconds now)
      : job_(job), observed_(observed), now_(now), now_s_(api::format_rfc3339(now)) {
    r_.status = job.status;
  }

  ReconcileResult run(const std::vector<api::FieldError>& parse_errors) {
    auto& st = r_.status;
    st.observed_generation = job_.meta.generation;
    // Deleting: the garbage collector removes the pods and the Service through the owner
    // references; creating anything now would only race it.
    if (job_.meta.deleting) return r_;
    if (api::is_finished(st.phase)) {
      finish_cleanup();
      finish_workload();
      return r_;
    }
    std::vector<api::FieldError> errors = parse_errors;
    for (auto& e : api::validate(job_)) errors.push_back(std::move(e));
    if (!errors.empty()) {
      fail("InvalidSpec", "invalid TrainingJob: " + api::join(errors), false);
      return r_;
    }
    st.size = size();
    partition_pods();
    if (job_.spec.run_policy.suspend) {
      suspend();
      return r_;
    }
    if (observed_.kueue && !admitted_by_kueue()) return r_;
    if (st.phase == Phase::kSuspended || st.phase == Phase::kQueued) resume();
    if (deadline_exceeded()) return r_;
    ensure_service();
    ensure_network_policy();
    delete_stale_pods();
    if (handle_disruptions()) return r_;
    if (handle_failures()) return r_;
    if (all_succeeded()) {
      finish(Phase::kSucceeded, "AllNodesSucceeded",
             "all " + std::to_string(size()) + " nodes completed", "Normal", false);
      return r_;
    }
    if (shrink_if_unplaced()) return r_;
    // Before creating: a pass that fails the job creates nothing.
    if (startup_deadline_exceeded()) return r_;
    create_missing_pods();
    place_on_admitted_flavors();
    update_gang_condition();
    update_progress();
    if (progress_deadline_exceeded()) return r_;
    update_running_phase();
    report_pods_ready();
    if (grow_if_room()) return r_;
    update_size_condition();
    update_stuck_condition();
    schedule_deadline();
    return r_;
  }

 private:
  // --- pods of this job, split by attempt -------------------------------------------------
  void partition_pods() {
    const int attempt = r_.status.attempt;
    for (const auto& p : observed_.pods) {
      if (p.grow_probe) {
        // Only a growing job's probes of this attempt are wanted; any other is deleted now.
        if (p.attempt == attempt && job_.spec.elastic && !p.deleting) {
          probes_.push_back(&p);
        } else {
          delete_pod(p, true);
        }
        continue;
      }
      // A deleted pod that had already terminated still tells how its rank ended.
      if (of_attempt(p, attempt) && (!p.deleting || terminated(p))) {
        current_[p.rank] = &p;
      } else {
        stale_.push_back(&p);
      }
    }
  }

  bool of_attempt(const ObservedPod& p, int attempt) const {
    return p.attempt == attempt && p.rank >= 0 && p.rank < size() &&
           p.name == api::pod_name(job_.meta.name, p.rank);
  }

  // A pod on a lost node is force-deleted (again, if an earlier graceful delete left it
  // Terminating): no kubelet will confirm it, and its name blocks the next attempt's pod.
  // `force`: no grace period (a probe pod, which holds no work).
  void delete_pod(const ObservedPod& p, bool force = false) {
    if (deleted_.count(p.name)) return;
    const auto lost = lost_node(p);
    if (p.deleting && !lost) return;
    deleted_.insert(p.name);
    r_.actions.emplace_back(DeletePod{p.name, p.uid, lost.has_value() || force});
    if (lost) event("Warning", "ForceDeletedPod", "pod " + p.name + " force-deleted: " + *lost);
  }

  // Why the node `p` is scheduled to is lost; nullopt while it is not (or nodes are not
  // watched, or the pod has no node). A node not Ready yet within the timeout asks for a
  // requeue when the timeout would end.
  std::optional<std::string> lost_node(const ObservedPod& p) {
    if (!observed_.nodes_watched || p.node_name.empty()) return std::nullopt;
    const auto it = observed_.nodes.find(p.node_name);
    const NodeVerdict v =
        assess_node(p.node_name, it == observed_.nodes.end() ? nullptr : &it->second,
                    job_.spec.run_policy.node_loss_timeout_seconds, now_);
    if (v.recheck_in) requeue_in(*v.recheck_in);
    if (!v.lost) return std::nullopt;
    return v.why;
  }

  void delete_stale_pods() {
    for (const ObservedPod* p : stale_) delete_pod(*p);
  }

  void delete_current_pods() {
    for (const auto& [rank, p] : current_) delete_pod(*p);
  }

  void delete_probes() {
    for (const ObservedPod* p : probes_) delete_pod(*p, true);
    r_.status.grow_probe_time.reset();
  }

  // Nodes the current attempt runs on: status.size within [minNodes, nnodes]; nnodes for a
  // job that is not elastic or has not started.
  int size() const {
    const int n = job_.spec.nnodes;
    const int s = r_.status.size;
    if (s <= 0 || !job_.spec.elastic) return n;
    // Kueue's admission is the ceiling: the quota it reserved is for that many pods.
    const int most =
        admitted_ && admitted_->admitted_count ? std::clamp(*admitted_->admitted_count, 1, n) : n;
    return std::clamp(s, std::clamp(api::min_nodes(job_.spec), 1, most), most);
  }

  // --- status helpers -------------------------------------------------------------------------
  void event(const std::string& type, const std::string& reason, const std::string& message) {
    r_.actions.emplace_back(RecordEvent{type, reason, message});
  }

  void transition(Phase phase, const std::string& why, const std::string& message,
                  const std::string& event_type) {
    // A condition's reason is required (metav1.Condition).
    const std::string reason = why.empty() ? kReasonUnspecified : why;
    auto& st = r_.status;
    if (st.phase != phase) event(event_type, reason, message);
    st.phase = phase;
    st.reason = reason;
    st.message = bounded_message(message);
    auto* c = &st.conditions;
    // Created stays True from the first pass on; while Pending/Starting it also carries the
    // phase's reason and message (see api::phase_condition_type).
    const bool early = phase == Phase::kPending || phase == Phase::kStarting;
    const auto* created = find_condition(*c, kCondCreated);
    if (early) {
      set_condition(c, kCondCreated, true, reason, message, now_s_);
    } else if (!created) {
      set_condition(c, kCondCreated, true, "Created", "TrainingJob accepted", now_s_);
    }
    auto set_if = [&](const char* type, Phase when) {
      set_condition(c, type, phase == when, reason, message, now_s_);
    };
    update_running_condition(phase, reason, message);
    set_if(kCondRestarting, Phase::kRestarting);
    set_if(kCondSuspended, Phase::kSuspended);
    set_if(kCondQueued, Phase::kQueued);
    set_if(kCondSucceeded, Phase::kSucceeded);
    set_if(kCondFailed, Phase::kFailed);
  }

  // Running is listed from the first pass: Unknown while the job is on its way to its first
  // run (the phase's reason says where it is), True once every pod of an attempt runs, False
  // when it stops running or the job is suspended, succeeds or fails first. Once known, it is
  // never Unknown again: a restart after a run is False (what ended it), not "not known".
  void update_running_condition(Phase phase, const std::string& reason,
                                const std::string& message) {
    auto* c = &r_.status.conditions;
    const bool on_the_way = phase == Phase::kPending || phase == Phase::kStarting ||
                            phase == Phase::kQueued || phase == Phase::kRestarting;
    const auto* running = find_condition(*c, kCondRunning);
    if (on_the_way && (!running || running->status == kStatusUnknown)) {
      set_unknown(c, kCondRunning, reason, message, now_s_);
    } else {
      report_condition(c, kCondRunning, phase == Phase::kRunning, reason, message, now_s_);
    }
  }

  void refresh_nodes(const std::set<int>& creating) {
    auto& nodes = r_.status.nodes;
    nodes.clear();
    // An invalid nnodes has no meaningful per-node list (and could be huge).
    if (job_.spec.nnodes < 1 || job_.spec.nnodes > api::kMaxNodes) return;
    for (int rank = 0; rank < size(); ++rank) {
      api::NodeStatus n;
      n.rank = rank;
      n.pod = api::pod_name(job_.meta.name, rank);
      auto it = current_.find(rank);
      if (it != current_.end()) {
        n.phase = it->second->phase.empty() ? "Pending" : it->second->phase;
        n.exit_code = it->second->exit_code;
        n.reason = it->second->reason;
        n.uid = it->second->uid;
        n.node = it->second->node_name;
        // Collateral: the rank stopped because a peer was lost (exit_code::kPeerLost).
        if (is_peer_lost(*it->second) && (n.reason.empty() || n.reason == "Error")) {
          n.reason = "PeerLost";
        }
        if (const auto stuck = stuck_reason(*it->second)) {
          if (n.reason.empty()) n.reason = stuck->reason;
          n.message = stuck->message;
        } else if (it->second->phase == "Running" && it->second->scrape) {
          const ProgressScrape* scrape = &*it->second->scrape;
          n.step = scraped_steps(scrape);
          n.message = scrape_problem(scrape);
        }
      } else {
        n.phase = creating.count(rank) ? "Pending" : "Missing";
        if (const auto b = waiting_for_.find(rank); b != waiting_for_.end()) n.message = b->second;
      }
      nodes.push_back(std::move(n));
    }
  }

  // --- finishing --------------------------------------------------------------------------------
  void finish(Phase phase, const std::string& reason, const std::string& message,
              const std::string& event_type, bool stop_all) {
    refresh_nodes({});
    transition(phase, reason, message, event_type);
    r_.status.completion_time = now_s_;
    stop_all_ = stop_all;
    finish_cleanup();
  }

  void fail(const std::string& reason, const std::string& message, bool stop_all) {
    finish(Phase::kFailed, reason, message, "Warning", stop_all);
  }

  // cleanPodPolicy, the deadline kill and ttlSecondsAfterFinished: recomputed from the
  // observed pods and the stored status on every reconcile of a finished job, so a delete that
  // failed (or a pod that appeared later) is dealt with on the next pass.
  void finish_cleanup() {
    const auto& rp = job_.spec.run_policy;
    const auto& st = r_.status;
    if (st.phase == Phase::kFailed &&
        (st.reason == kReasonDeadlineExceeded || st.reason == kReasonStartupDeadlineExceeded)) {
      stop_all_ = true;
    }
    for (const auto& p : observed_.pods) {
      const bool delete_it =
          p.grow_probe || rp.clean_pod_policy == api::CleanPodPolicy::kAll ||
          ((rp.clean_pod_policy == api::CleanPodPolicy::kRunning || stop_all_) && !terminated(p));
      if (delete_it) delete_pod(p, p.grow_probe);
    }
    r_.status.grow_probe_time.reset();
    r_.status.next_grow_time.reset();
    if (!rp.ttl_seconds_after_finished) return;
    const auto done = r_.status.completion_time ? api::parse_rfc3339(*r_.status.completion_time)
                                                : std::optional<api::UnixSeconds>(now_);
    const api::UnixSeconds expires = done.value_or(now_) + *rp.ttl_seconds_after_finished;
    if (now_ >= expires) {
      r_.actions.emplace_back(DeleteJob{job_.meta.name, job_.meta.uid});
    } else {
      r_.requeue_after_seconds = expires - now_;
    }
  }

  // --- suspend / resume ---------------------------------------------------------------------
  void suspend() {
    stop_pods(Phase::kSuspended, "Suspended", "runPolicy.suspend is true; pods deleted", "Normal");
  }

  // Suspended or Queued: every pod is deleted (the ranks get their grace period to checkpoint
  // on SIGTERM), none is created.
  void stop_pods(Phase phase, const std::string& reason, const std::string& message,
                 const std::string& event_type) {
    for (const auto& p : observed_.pods) delete_pod(p, p.grow_probe);
    r_.status.grow_probe_time.reset();
    r_.status.next_grow_time.reset();
    refresh_nodes({});
    for (auto& n : r_.status.nodes) {
      if (deleted_.count(n.pod) || n.phase == "Missing") n.phase = api::to_string(phase);
    }
    // activeDeadlineSeconds counts running time: the clock restarts on resume (as for Jobs).
    r_.status.start_time.reset();
    transition(phase, reason, message, event_type);
  }

  // --- Kueue (kueue.x-k8s.io/queue-name; controller/kueue_workload.h) ------------------------
  // Whether Kueue lets the job have pods now. When not, its pods are stopped, the phase is
  // Queued, and the Workload is created, released after an eviction, or let go once deleted.
  bool admitted_by_kueue() {
    const ObservedKueue& k = *observed_.kueue;
    const std::string queue = kueue::queue_name(job_).value_or("");
    const std::string in_queue = "queue " + queue;
    if (k.disabled) {
      stop_pods(Phase::kQueued, "KueueDisabled",
                "label " + std::string(kueue::kQueueNameLabel) + "=" + queue +
                    " is set, but this operator runs with --kueue=false; the job waits",
                "Warning");
      return false;
    }
    if (!k.served) {
      stop_pods(Phase::kQueued, "KueueNotServed",
                "label " + std::string(kueue::kQueueNameLabel) + "=" + queue +
                    " is set, but the cluster serves no Kueue Workload API (" + kueue::kApiVersion +
                    "); the job waits for Kueue",
                "Warning");
      requeue_in(30);
      return false;
    }
    if (!k.workload) {
      // A Workload only once no pod is left: the pods of a job that just got the label (or
      // whose Workload was deleted) must not run outside the quota.
      if (observed_.pods.empty()) {
        r_.actions.emplace_back(CreateWorkload{kueue::desired_workload(job_, queue, k.priority)});
      }
      stop_pods(Phase::kQueued, "Pending", "waiting in " + in_queue, "Normal");
      return false;
    }
    const kueue::ObservedWorkload& w = *k.workload;
    if (w.deleting) {
      stop_pods(Phase::kQueued, "WorkloadDeleted",
                "Workload " + w.name + " is being deleted; the job waits in " + in_queue +
                    " with a new one once its pods are gone",
                "Warning");
      if (observed_.pods.empty()) let_go(w);
      return false;
    }
    if (w.evicted && w.has_admission) {
      // Kueue keeps the quota until the job has stopped and says so.
      stop_pods(
          Phase::kQueued, "Evicted",
          evicted_by(w) + "; the ranks checkpoint and stop, then the job waits in " + in_queue,
          "Warning");
      if (observed_.pods.empty()) {
        kueue::ObservedWorkload released = w;
        released.object["status"] = kueue::released_status(w.object, now_);
        r_.actions.emplace_back(UpdateWorkloadStatus{released.object, "release"});
      }
      return false;
    }
    if (!w.admitted) {
      // After an eviction Kueue keeps the Evicted condition until it admits the job again.
      const std::string waiting =
          "waiting in " + in_queue + (w.pending_message.empty() ? "" : ": " + w.pending_message);
      if (w.evicted) {
        stop_pods(Phase::kQueued, "Evicted", evicted_by(w) + "; " + waiting, "Warning");
      } else {
        stop_pods(Phase::kQueued, w.pending_reason.empty() ? "Pending" : w.pending_reason, waiting,
                  "Normal");
      }
      return false;
    }
    admitted_ = &w;
    return true;
  }

  static std::string evicted_by(const kueue::ObservedWorkload& w) {
    return "evicted by Kueue (" + w.evicted_reason + (w.evicted_message.empty() ? "" : ": ") +
           w.evicted_message + ")";
  }

  // The Workload's quota is no longer the job's: its finalizer goes.
  void let_go(const kueue::ObservedWorkload& w) {
    if (!w.has_finalizer) return;
    r_.actions.emplace_back(
        RemoveWorkloadFinalizer{w.name, w.resource_version, kueue::finalizers_without_ours(w)});
  }

  // The admitted flavors' node labels and tolerations on every pod created in this pass.
  void place_on_admitted_flavors() {
    if (!admitted_) return;
    for (auto& a : r_.actions) {
      if (auto* create = std::get_if<CreatePod>(&a)) {
        kueue::apply_flavors(create->object, *admitted_, observed_.kueue->flavors);
      }
    }
  }

  // Kueue's waitForPodsReady reads the PodsReady condition the job's controller keeps on the
  // Workload: WaitForStart until every rank runs, Started, then WaitForRecovery / Recovered.
  void report_pods_ready() {
    if (!admitted_) return;
    const std::string& was = admitted_->pods_ready_reason;
    const bool ready = running_count() == size();
    const bool was_ready = was == "Started" || was == "Recovered";
    const bool recovering = was == "WaitForRecovery";
    const std::string reason = ready
                                   ? (recovering ? "Recovered" : (was_ready ? was : "Started"))
                                   : (was_ready || recovering ? "WaitForRecovery" : "WaitForStart");
    if (reason == was) return;
    const std::string message = ready ? "all " + std::to_string(size()) + " ranks are running"
                                      : std::to_string(running_count()) + " of " +
                                            std::to_string(size()) + " ranks running";
    kueue::ObservedWorkload w = *admitted_;
    w.object["status"] =
        kueue::status_with_condition(admitted_->object, "PodsReady", ready, reason, message, now_);
    r_.actions.emplace_back(UpdateWorkloadStatus{w.object, "PodsReady"});
  }

  // A finished job's Workload says Finished (Kueue then frees the quota) and is let go.
  void finish_workload() {
    if (!observed_.kueue || !observed_.kueue->workload) return;
    const kueue::ObservedWorkload& w = *observed_.kueue->workload;
    if (!w.finished) {
      const bool ok = r_.status.phase == Phase::kSucceeded;
      kueue::ObservedWorkload done = w;
      done.object["status"] = kueue::status_with_condition(
          w.object, "Finished", true, ok ? "Succeeded" : "Failed", r_.status.message, now_);
      r_.actions.emplace_back(UpdateWorkloadStatus{done.object, "Finished"});
      return;
    }
    let_go(w);
  }

  void resume() {
    auto& st = r_.status;
    const bool queued = st.phase == Phase::kQueued;
    // A fresh rendezvous: pods of the stopped attempt, if still terminating, are stale. A job
    // admitted for the first time has had no attempt yet.
    if (!queued || st.attempt_start_time || !observed_.pods.empty()) begin_next_attempt();
    // An elastic job tries its full size again (or what Kueue admitted).
    st.size =
        admitted_ && admitted_->admitted_count ? *admitted_->admitted_count : job_.spec.nnodes;
    st.size = size();
    st.size_since = now_s_;
    current_.clear();
    stale_.clear();
    partition_pods();
    if (queued && admitted_) {
      std::string flavors;
      for (const auto& [resource, flavor] : admitted_->flavors) {
        flavors += (flavors.empty() ? "" : ", ") + resource + "=" + flavor;
      }
      transition(Phase::kPending, "Admitted",
                 "admitted by Kueue (ClusterQueue " + admitted_->cluster_queue +
                     (flavors.empty() ? "" : ", flavors " + flavors) + ") for " +
                     std::to_string(size()) + " nodes; starting attempt " +
                     std::to_string(st.attempt),
                 "Normal");
      return;
    }
    const std::string why =
        queued ? "no longer queued (label " + std::string(kueue::kQueueNameLabel) + " removed)"
               : std::string("runPolicy.suspend is false");
    transition(Phase::kPending, "Resumed", why + "; starting attempt " + std::to_string(st.attempt),
               "Normal");
  }

  // The pods of the attempt that ends are no longer the ranks' pods: forget their uids, or
  // the next pass would take them for pods of the new attempt that vanished.
  void begin_next_attempt() {
    r_.status.attempt += 1;
    r_.status.attempt_start_time.reset();  // set when the attempt's first pod is created
    for (auto& n : r_.status.nodes) n.uid.clear();
  }

  // --- deadline ---------------------------------------------------------------------------------
  std::optional<api::UnixSeconds> started() const {
    if (!r_.status.start_time) return std::nullopt;
    return api::parse_rfc3339(*r_.status.start_time);
  }

  bool deadline_exceeded() {
    const auto& limit = job_.spec.run_policy.active_deadline_seconds;
    const auto start = started();
    if (!limit || !start || now_ - *start < *limit) return false;
    // The job has failed; its pods must stop holding GPUs whatever cleanPodPolicy says.
    fail(kReasonDeadlineExceeded,
         "ran for " + std::to_string(now_ - *start) +
             "s, past activeDeadlineSeconds=" + std::to_string(*limit),
         true);
    return true;
  }

  void schedule_deadline() {
    const auto& limit = job_.spec.run_policy.active_deadline_seconds;
    const auto start = started();
    if (!limit || !start) return;
    requeue_in(*start + *limit - now_);
  }

  void requeue_in(int64_t seconds) {
    if (!r_.requeue_after_seconds || seconds < *r_.requeue_after_seconds) {
      r_.requeue_after_seconds = seconds;
    }
  }

  // --- startup deadline, stuck pods -------------------------------------------------------
  int running_count() const {
    int running = 0;
    for (const auto& [rank, p] : current_)
      running += p->phase == "Running" || p->phase == "Succeeded";
    return running;
  }

  // "pod pp-node-1 (rank 1): ImagePullBackOff: container worker: Back-off pulling image ..."
  static std::string describe_stuck(const ObservedPod& p, const StuckPod& s) {
    return "pod " + p.name + " (rank " + std::to_string(p.rank) + "): " + s.reason +
           (s.message.empty() ? "" : ": " + s.message);
  }

  // runPolicy.startupDeadlineSeconds: the attempt's pods must all be Running that long after
  // its first pod was created, or the job fails. A restart would meet the same missing image or
  // full cluster, so the job fails (StartupDeadlineExceeded) and its pods are deleted.
  bool startup_deadline_exceeded() {
    const auto& limit = job_.spec.run_policy.startup_deadline_seconds;
    const auto& st = r_.status;
    if (!limit || !st.attempt_start_time || job_.status.phase == Phase::kRunning) return false;
    const auto start = api::parse_rfc3339(*st.attempt_start_time);
    const int running = running_count();
    if (!start || running == size()) return false;
    if (now_ - *start < *limit) {
      requeue_in(*start + *limit - now_);
      return false;
    }
    std::string message = std::to_string(running) + " of " + std::to_string(size()) +
                          " nodes running " + std::to_string(now_ - *start) + "s after attempt " +
                          std::to_string(st.attempt) +
                          " started, past startupDeadlineSeconds=" + std::to_string(*limit);
    for (int rank = 0; rank < size(); ++rank) {
      const auto it = current_.find(rank);
      if (it == current_.end()) {
        message += "; rank " + std::to_string(rank) + " has no pod";
      } else if (const auto stuck = stuck_reason(*it->second)) {
        message += "; " + describe_stuck(*it->second, *stuck);
      } else if (it->second->phase != "Running" && it->second->phase != "Succeeded") {
        message += "; pod " + it->second->name + " (rank " + std::to_string(rank) + ") is " +
                   (it->second->phase.empty() ? std::string("Pending") : it->second->phase);
      }
    }
    fail(kReasonStartupDeadlineExceeded, message, true);
    return true;
  }

  // status.conditions[Stuck]: True naming the first pod that cannot start, with an Event when
  // it turns True; False once none is stuck.
  void update_stuck_condition() {
    std::string reason;
    std::string message;
    int stuck = 0;
    for (const auto& [rank, p] : current_) {
      const auto s = stuck_reason(*p);
      if (!s) continue;
      if (stuck++ == 0) {
        reason = s->reason;
        message = describe_stuck(*p, *s);
      }
    }
    if (stuck > 1) message += " (and " + std::to_string(stuck - 1) + " more pods stuck)";
    auto* conditions = &r_.status.conditions;
    if (stuck == 0) {
      set_condition(conditions, kCondStuck, false, "NoPodStuck",
                    "no pod of attempt " + std::to_string(r_.status.attempt) + " is stuck", now_s_);
      return;
    }
    const auto* before = find_condition(job_.status.conditions, kCondStuck);
    const bool news = !before || before->status != "True";
    set_condition(conditions, kCondStuck, true, reason, message, now_s_);
    if (news) event("Warning", reason, message);
  }

  // --- progress ---------------------------------------------------------------------------
  // The Running pods of the current attempt with their latest scrapes, by rank.
  std::vector<RankScrape> running_ranks() const {
    std::vector<RankScrape> out;
    for (const auto& [rank, p] : current_) {
      if (p->phase != "Running") continue;
      out.push_back({rank, p->name, p->node_name, p->scrape ? &*p->scrape : nullptr});
    }
    return out;
  }

  void update_progress() {
    const auto ranks = running_ranks();
    if (ranks.empty()) return;
    r_.status.progress = fold_progress(r_.status.progress, r_.status.attempt, ranks);
  }

  // runPolicy.progressDeadlineSeconds: a Running gang whose step has not advanced for that
  // long, counted from its last advance in this attempt or else from when all its pods were
  // Running, is restarted; the stall counts against backoffLimit (a hung collective or a
  // frozen rank is a failure of the run, not of the cluster).
  bool progress_deadline_exceeded() {
    const auto& limit = job_.spec.run_policy.progress_deadline_seconds;
    if (!limit || job_.status.phase != Phase::kRunning) return false;
    const auto ranks = running_ranks();
    if (static_cast<int>(ranks.size()) != size()) return false;
    const auto* running = find_condition(job_.status.conditions, kCondRunning);
    if (!running || running->status != "True") return false;
    const auto since = api::parse_rfc3339(running->last_transition_time);
    if (!since) return false;
    api::UnixSeconds last = *since;
    const auto& progress = r_.status.progress;
    if (progress && progress->attempt == r_.status.attempt) {
      if (const auto t = api::parse_rfc3339(progress->last_progress_time)) {
        last = std::max(last, *t);
      }
    }
    if (now_ - last < *limit) {
      requeue_in(last + *limit - now_);
      return false;
    }
    const StalledRank stalled = pick_stalled_rank(ranks);
    const std::string message =
        "no training step for " + std::to_string(now_ - last) +
        "s, past progressDeadlineSeconds=" + std::to_string(*limit) + "; stalled: rank " +
        std::to_string(stalled.rank) + " (pod " + stalled.pod +
        (stalled.node.empty() ? "" : " on node " + stalled.node) + "): " + stalled.why;
    api::StallRecord record;
    record.attempt = r_.status.attempt;
    record.rank = stalled.rank;
    record.pod = stalled.pod;
    record.node = stalled.node;
    record.step = stalled.step;
    record.time = now_s_;
    record.message = message;
    r_.status.last_stall = record;
    // restart_gang records the restart's event under this reason; the job's end does not.
    if (r_.status.restarts >= job_.spec.run_policy.backoff_limit) {
      event("Warning", kReasonProgressDeadlineExceeded, message);
    }
    restart_gang(RestartCause::kFailure, message, std::nullopt, kReasonProgressDeadlineExceeded);
    for (auto& n : r_.status.nodes) {
      if (n.rank == stalled.rank) n.reason = "Stalled";
    }
    return true;
  }

  // --- creation ---------------------------------------------------------------------------------
  void ensure_service() {
    const std::string name = api::service_name(job_.meta.name);
    for (const auto& s : observed_.services) {
      if (s.name == name) return;
    }
    r_.actions.emplace_back(CreateService{desired_service(job_)});
  }

  void ensure_network_policy() {
    if (!job_.spec.network.policy) return;
    const std::string name = api::network_policy_name(job_.meta.name);
    for (const auto& p : observed_.network_policies) {
      if (p.name == name) return;
    }
    r_.actions.emplace_back(
        CreateNetworkPolicy{desired_network_policy(job_, observed_.operator_namespace)});
  }

  // An attempt's pods are created together: while a pod of an earlier attempt still holds one
  // rank's name (terminating), none is created, so no part of the gang waits on nodes for
  // the rest (a pod stuck on a lost node is force-deleted, see delete_pod).
  void create_missing_pods() {
    std::map<std::string, const ObservedPod*> blocked;  // names held by pods of other attempts
    for (const ObservedPod* p : stale_) blocked[p->name] = p;
    const bool starting = current_.empty();
    for (int rank = 0; rank < size(); ++rank) {
      if (current_.count(rank)) continue;
      const auto b = blocked.find(api::pod_name(job_.meta.name, rank));
      if (b == blocked.end()) continue;
      const ObservedPod& p = *b->second;
      waiting_for_[rank] = "waiting for pod " + p.name + " of attempt " +
                           std::to_string(p.attempt) + " to terminate" +
                           (p.node_name.empty() ? "" : " on node " + p.node_name);
    }
    if (starting && !waiting_for_.empty()) return;
    for (int rank = 0; rank < size(); ++rank) {
      if (current_.count(rank)) continue;
      const std::string name = api::pod_name(job_.meta.name, rank);
      if (blocked.count(name)) continue;
      // The attempt's token before its first pod: the kubelet would otherwise hold the pod
      // (CreateContainerConfigError) until it appears.
      if (creating_.empty() && job_.spec.network.rendezvous_secret) {
        r_.actions.emplace_back(
            CreateRendezvousSecret{desired_rendezvous_secret(job_, r_.status.attempt)});
      }
      // The PodGroup before the pods that name it (the scheduler holds them until it exists).
      const std::string group = pod_group();
      if (creating_.empty() && !group.empty()) {
        r_.actions.emplace_back(CreatePodGroup{
            desired_pod_group(job_, r_.status.attempt, *observed_.pod_group_api, size())});
      }
      r_.actions.emplace_back(CreatePod{desired_pod(job_, rank, r_.status.attempt, group, size())});
      creating_.insert(rank);
    }
    if (!creating_.empty() || !current_.empty()) {
      if (!r_.status.start_time) r_.status.start_time = now_s_;
      if (!r_.status.attempt_start_time) {
        r_.status.attempt_start_time = now_s_;
        const auto& limit = job_.spec.run_policy.startup_deadline_seconds;
        if (limit) requeue_in(*limit);
      }
    }
  }

  // --- gang placement ----------------------------------------------------------------------
  // The current attempt's PodGroup, "" when placement is pod by pod.
  std::string pod_group() const {
    const auto& api = observed_.pod_group_api;
    if (!job_.spec.run_policy.gang_scheduling || !api || api->empty()) return "";
    return api::pod_group_name(job_.meta.name, r_.status.attempt);
  }

  // status.conditions[GangScheduling]: how this attempt's pods are placed, and once (with a
  // Warning event) when they cannot be placed all together.
  void update_gang_condition() {
    if (!observed_.pod_group_api) return;
    const std::string attempt = std::to_string(r_.status.attempt);
    const std::string n = std::to_string(size());
    const auto* before = find_condition(job_.status.conditions, kCondGangScheduling);
    auto* conditions = &r_.status.conditions;
    if (const std::string group = pod_group(); !group.empty()) {
      report_condition(conditions, kCondGangScheduling, true, "PodGroup",
                       "attempt " + attempt + "'s " + n +
                           " pods are placed all together or not at all (PodGroup " + group + ", " +
                           *observed_.pod_group_api + ")",
                       now_s_);
      return;
    }
    const bool disabled = !job_.spec.run_policy.gang_scheduling;
    const std::string reason = disabled ? "Disabled" : "NotServed";
    const std::string message =
        std::string(disabled ? "runPolicy.gangScheduling is false"
                             : "the cluster serves no PodGroup API (scheduling.k8s.io)") +
        ": placement is not all-or-nothing; some of the " + n +
        " pods may hold nodes while the others wait for room";
    report_condition(conditions, kCondGangScheduling, false, reason, message, now_s_);
    if (!disabled && (!before || before->reason != reason)) event("Warning", reason, message);
  }

  void update_running_phase() {
    refresh_nodes(creating_);
    const int n = size();
    const int running = running_count();
    const std::string counts = std::to_string(running) + " of " + std::to_string(n) +
                               " nodes running (attempt " + std::to_string(r_.status.attempt) + ")";
    const Phase phase = r_.status.phase;
    if (running == n) {
      transition(Phase::kRunning, "AllNodesRunning", counts, "Normal");
    } else if (phase == Phase::kRestarting) {
      transition(Phase::kRestarting, r_.status.reason, r_.status.message, "Warning");
    } else if (current_.empty()) {
      transition(Phase::kPending, phase == Phase::kPending ? r_.status.reason : "Created",
                 "creating " + std::to_string(n) + " pods and Service " +
                     api::service_name(job_.meta.name),
                 "Normal");
    } else {
      transition(Phase::kStarting, "NodesStarting", counts, "Normal");
    }
  }

  // --- disruptions --------------------------------------------------------------------------
  // The first pod of the current attempt lost to a disruption, if any.
  std::optional<Disruption> find_disruption() {
    for (const auto& [rank, p] : current_) {
      if (std::string what = disruption_of(*p); !what.empty())
        return Disruption{rank, p->name, what};
    }
    for (const auto& [rank, p] : current_) {
      if (terminated(*p)) continue;
      if (const auto lost = lost_node(*p)) return Disruption{rank, p->name, "lost: " + *lost, true};
    }
    const int attempt = r_.status.attempt;
    for (const ObservedPod* p : stale_) {
      // Partitioned as stale only because it is being deleted: the operator deletes the
      // current attempt's pods only after starting the next, so someone else did.
      if (!of_attempt(*p, attempt)) continue;
      const std::string what = disruption_of(*p);
      return Disruption{p->rank, p->name,
                        what.empty() ? "deleted from outside the operator" : what};
    }
    // A pod observed in this attempt (its uid is in status) that is gone: deleted and already
    // removed, e.g. a pod that never reached a node, a force deletion, or PodGC after its
    // node was deleted. One that had terminated was dealt with when it did.
    if (job_.status.attempt != attempt) return std::nullopt;
    for (const auto& n : job_.status.nodes) {
      if (n.uid.empty() || n.phase == "Succeeded" || n.phase == "Failed") continue;
      const auto it = current_.find(n.rank);
      if (it != current_.end() && it->second->uid == n.uid) continue;
      return Disruption{n.rank, n.pod, "deleted from outside the operator (the pod is gone)"};
    }
    return std::nullopt;
  }

  // Returns true when a disruption decided this reconcile (gang restart or Failed).
  bool handle_disruptions() {
    const auto d = find_disruption();
    if (!d) return false;
    if (d->node_lost) {
      restart_gang(RestartCause::kDisruption,
                   "node " + std::to_string(d->rank) + " (pod " + d->pod + ") was " + d->what,
                   d->rank, kReasonNodeLost);
      return true;
    }
    const std::string what =
        "node " + std::to_string(d->rank) + " (pod " + d->pod + ") was " + d->what;
    restart_gang(RestartCause::kDisruption, what, d->rank);
    return true;
  }

  // --- failure policy -------------------------------------------------------------------------
  bool all_succeeded() const {
    if (static_cast<int>(current_.size()) != size()) return false;
    for (const auto& [rank, p] : current_) {
      if (p->phase != "Succeeded") return false;
    }
    return true;
  }

  // Returns true when a failed pod decided this reconcile (gang restart or Failed).
  bool handle_failures() {
    std::vector<const ObservedPod*> failed;
    for (const auto& [rank, p] : current_) {
      if (p->phase == "Failed") failed.push_back(p);
    }
    if (failed.empty()) return false;
    // The rank to blame: not one that stopped only because a peer was lost (kPeerLost).
    const ObservedPod* first = blamed_failure(failed);
    if (is_peer_lost(*first)) {
      // Every failed rank lost a peer. The rank that was lost may yet report why (a 137 from
      // the OOM killer, a disruption): wait for it as for a permanent code below. If nothing
      // shows, a node or network went away unseen: not the program's fault, so the gang
      // restarts as for a disruption.
      if (awaiting_verdict(*first)) return true;
      restart_gang(RestartCause::kDisruption,
                   describe_failure(*first) + " (a peer was lost, no rank failed on its own)",
                   std::nullopt);
      return true;
    }
    const ObservedPod* permanent = nullptr;
    bool any_retryable = false;
    const auto policy = job_.spec.run_policy.restart_policy;
    for (const ObservedPod* p : failed) {
      // Collateral exits say nothing about whether the cause is worth retrying.
      if (is_peer_lost(*p)) continue;
      // ExitCode: 1-127 are the program's own errors (a retry fails the same way); >= 128 are
      // signals (OOM kill, preemption) worth retrying. No code (eviction) is retryable too.
      const bool program_error = p->exit_code && *p->exit_code >= 1 && *p->exit_code <= 127;
      if (!program_error) {
        any_retryable = true;
      } else if (!permanent || p == first) {
        permanent = p;
      }
    }
    // When one rank is killed, its peers fail too (exit 1 from a broken collective): the
    // group's failure is retryable if any of its failed pods is.
    if (policy != api::RestartPolicy::kExitCode || any_retryable) permanent = nullptr;
    if (policy == api::RestartPolicy::kNever) {
      fail("NodeFailed", describe_failure(*first) + "; restartPolicy is Never", false);
      return true;
    }
    // A peer still running may yet report a retryable code (the one that was killed).
    if (permanent && awaiting_verdict(*permanent)) return true;
    if (permanent) {
      fail("PermanentExitCode",
           describe_failure(*permanent) +
               "; exit codes 1-127 are permanent under restartPolicy ExitCode",
           false);
      return true;
    }
    restart_gang(RestartCause::kFailure, describe_failure(*first), std::nullopt);
    return true;
  }

  // While pods of the group still run, a failure that would decide the job's fate by what
  // it is not (a permanent code, or only collateral exits) waits for the others to report,
  // up to kExitCodeVerdictGraceSeconds from `decider`'s exit; true while waiting (the status
  // stays as it is, a requeue is due when the wait ends).
  bool awaiting_verdict(const ObservedPod& decider) {
    if (!decider.finished_at) return false;
    bool group_settled = true;
    for (const auto& [rank, p] : current_)
      group_settled = group_settled && (p->phase == "Failed" || p->phase == "Succeeded");
    const int64_t waited = now_ - *decider.finished_at;
    if (group_settled || waited >= kExitCodeVerdictGraceSeconds) return false;
    const int64_t left = kExitCodeVerdictGraceSeconds - waited;
    if (!r_.requeue_after_seconds || left < *r_.requeue_after_seconds) {
      r_.requeue_after_seconds = left;
    }
    return true;
  }

  // A DDP group cannot lose a rank: stop every pod of this attempt and start a new one, or
  // fail the job when the cause's limit is used up. `what` names the pod and what happened
  // to it; `disrupted_rank`, if any, is marked in status.nodes.
  void restart_gang(RestartCause cause, const std::string& what, std::optional<int> disrupted_rank,
                    const std::string& why = "") {
    auto& st = r_.status;
    const auto& rp = job_.spec.run_policy;
    const bool disruption = cause == RestartCause::kDisruption;
    int& used = disruption ? st.disruptions : st.restarts;
    const int limit = disruption ? rp.disruption_limit : rp.backoff_limit;
    if (used >= limit) {
      if (disruption) {
        fail("DisruptionLimitExceeded",
             what + "; restarted " + std::to_string(used) +
                 " times for disruptions, disruptionLimit is " + std::to_string(limit),
             false);
      } else {
        fail("BackoffLimitExceeded",
             what + "; restarted " + std::to_string(used) + " times, backoffLimit is " +
                 std::to_string(limit),
             false);
      }
      mark_disrupted(disrupted_rank, why == kReasonNodeLost ? kReasonNodeLost : "Disrupted");
      return;
    }
    refresh_nodes({});
    mark_disrupted(disrupted_rank, why == kReasonNodeLost ? kReasonNodeLost : "Disrupted");
    delete_current_pods();
    delete_probes();
    used += 1;
    begin_next_attempt();
    const std::string reason = !why.empty() ? why : disruption ? "NodeDisrupted" : "NodeFailed";
    const std::string count =
        disruption ? "disruption " + std::to_string(st.disruptions) + " of " +
                         std::to_string(limit) + "; not counted against backoffLimit"
                   : "restart " + std::to_string(st.restarts) + " of " + std::to_string(limit);
    transition(Phase::kRestarting, reason,
               what + "; restarting all " + std::to_string(size()) + " nodes as attempt " +
                   std::to_string(st.attempt) + " (" + count + ")",
               "Warning");
    if (job_.status.phase == Phase::kRestarting) {
      // Consecutive restarts still deserve an event each.
      event("Warning", reason, r_.status.message);
    }
  }

  void mark_disrupted(std::optional<int> rank, const char* reason) {
    if (!rank) return;
    for (auto& n : r_.status.nodes) {
      if (n.rank != *rank) continue;
      if (n.phase == "Missing") n.phase = "Deleted";
      n.reason = reason;
    }
  }

  // --- elastic size -----------------------------------------------------------------------
  static std::string seconds(int64_t s) { return std::to_string(s) + "s"; }

  std::string of_nodes(int n) const {
    return std::to_string(n) + " of " + std::to_string(job_.spec.nnodes) + " nodes";
  }

  // A new attempt on `to` nodes from the newest checkpoint: the ranks that run stop at an
  // iteration and checkpoint (SIGTERM), pods that wait for room go at once. Counted neither
  // against backoffLimit nor disruptionLimit.
  void resize(int to, const std::string& reason, const std::string& why) {
    auto& st = r_.status;
    const int from = size();
    refresh_nodes({});
    delete_current_pods();
    delete_probes();
    begin_next_attempt();
    st.size = to;
    st.size_since = now_s_;
    st.next_grow_time.reset();
    if (to < job_.spec.nnodes) {
      st.next_grow_time = api::format_rfc3339(now_ + job_.spec.elastic->grow_interval_seconds);
    }
    const std::string message = why + "; restarting on " + of_nodes(to) + " (was " +
                                std::to_string(from) + ") as attempt " +
                                std::to_string(st.attempt) + " from the newest checkpoint";
    transition(Phase::kRestarting, reason, message, "Normal");
    if (job_.status.phase == Phase::kRestarting) event("Normal", reason, message);
    report_condition(&st.conditions, kCondFullSize, to == job_.spec.nnodes,
                     to == job_.spec.nnodes ? "FullSize" : reason, message, now_s_);
  }

  // spec.elastic: an attempt whose pods are not all on nodes placementTimeoutSeconds after
  // its first pod was created restarts smaller. Placed all together, nothing tells how much
  // room there is, so it tries one node fewer; placed one by one, as many as were placed.
  bool shrink_if_unplaced() {
    const auto& e = job_.spec.elastic;
    const auto& st = r_.status;
    if (!e || size() <= e->min_nodes || !st.attempt_start_time || current_.empty()) return false;
    int unplaced = size() - static_cast<int>(current_.size());
    std::string scheduler_says;
    for (const auto& [rank, p] : current_) {
      if (!p->node_name.empty() || p->phase == "Running" || terminated(*p)) continue;
      ++unplaced;
      if (scheduler_says.empty()) scheduler_says = p->unschedulable_message;
    }
    const auto start = api::parse_rfc3339(*st.attempt_start_time);
    if (unplaced == 0 || !start) return false;
    const api::UnixSeconds due = *start + e->placement_timeout_seconds;
    if (now_ < due) {
      requeue_in(due - now_);
      return false;
    }
    const int to = pod_group().empty() ? std::max(e->min_nodes, size() - unplaced) : size() - 1;
    std::string why = std::to_string(unplaced) + " of attempt " + std::to_string(st.attempt) +
                      "'s " + std::to_string(size()) + " pods not placed on a node " +
                      seconds(now_ - *start) +
                      " after it started (elastic.placementTimeoutSeconds=" +
                      std::to_string(e->placement_timeout_seconds) + ")";
    if (!scheduler_says.empty()) why += ": " + scheduler_says;
    resize(to, "PlacementTimeout", why);
    return true;
  }

  // spec.elastic: a Running job below nnodes looks for room every growIntervalSeconds with
  // probe pods (one per missing node) that ask the scheduler for a rank's resources. When all
  // are placed, or some are when placementTimeoutSeconds ends, the gang restarts that much
  // larger; when none is, the probes go and the next look is an interval later.
  bool grow_if_room() {
    const auto& e = job_.spec.elastic;
    auto& st = r_.status;
    // Under Kueue the job runs at the size admitted; more nodes would be more than the quota.
    const int missing = admitted_ ? 0 : job_.spec.nnodes - size();
    if (!e || missing <= 0 || st.phase != Phase::kRunning) {
      delete_probes();
      if (!e || missing <= 0) st.next_grow_time.reset();
      return false;
    }
    if (!st.next_grow_time)
      st.next_grow_time = api::format_rfc3339(now_ + e->grow_interval_seconds);
    if (!st.grow_probe_time) {
      const api::UnixSeconds due = api::parse_rfc3339(*st.next_grow_time).value_or(now_);
      if (now_ < due) {
        requeue_in(due - now_);
        return false;
      }
      st.grow_probe_time = now_s_;
      event("Normal", "GrowProbe",
            "running on " + of_nodes(size()) + ": looking for room for " + std::to_string(missing) +
                " more with probe pods");
    }
    std::set<std::string> existing;
    int placed = 0;
    for (const ObservedPod* p : probes_) {
      existing.insert(p->name);
      placed += !p->node_name.empty();
    }
    const api::UnixSeconds started = api::parse_rfc3339(*st.grow_probe_time).value_or(now_);
    const bool timed_out = now_ - started >= e->placement_timeout_seconds;
    if (placed >= missing || (timed_out && placed > 0)) {
      const int to = size() + std::min(placed, missing);
      resize(to, "GrowBack",
             "probe pods found room for " + std::to_string(to - size()) + " more nodes");
      return true;
    }
    if (timed_out) {
      delete_probes();
      st.next_grow_time = api::format_rfc3339(now_ + e->grow_interval_seconds);
      requeue_in(e->grow_interval_seconds);
      return false;
    }
    for (int i = 0; i < missing; ++i) {
      const std::string name = api::grow_probe_name(job_.meta.name, i);
      if (existing.count(name) || deleted_.count(name)) continue;
      r_.actions.emplace_back(CreatePod{desired_grow_probe(job_, i, st.attempt)});
    }
    requeue_in(started + e->placement_timeout_seconds - now_);
    return false;
  }

  // status.conditions[FullSize] of an elastic job: True on all nnodes nodes; below, the
  // reason and message of the resize that made it smaller stay.
  void update_size_condition() {
    if (!job_.spec.elastic) return;
    auto* conditions = &r_.status.conditions;
    if (size() == job_.spec.nnodes) {
      report_condition(conditions, kCondFullSize, true, "FullSize",
                       "running on all " + std::to_string(size()) + " nodes", now_s_);
      return;
    }
    const auto* c = find_condition(*conditions, kCondFullSize);
    if (c && c->status == "False") return;
    report_condition(conditions, kCondFullSize, false, "Resized", "running on " + of_nodes(size()),
                     now_s_);
  }

  const api::TrainingJob& job_;
  const Observed& observed_;
  const api::UnixSeconds now_;
  const std::string now_s_;
  ReconcileResult r_;
  std::map<int, const ObservedPod*> current_;
  std::vector<const ObservedPod*> stale_;
  std::vector<const ObservedPod*> probes_;  // grow probes of this attempt (spec.elastic)
  std::set<std::string> deleted_;
  std::set<int> creating_;
  // Ranks whose pod waits for a pod of an earlier attempt to leave its name: why.
  std::map<int, std::string> waiting_for_;
  // The job's Workload when Kueue admitted it (kueue.x-k8s.io/queue-name); null otherwise.
  const kueue::ObservedWorkload* admitted_ = nullptr;
  bool stop_all_ = false;
};

}  // namespace

ReconcileResult reconcile(const api::TrainingJob& job,
                          const std::vector<api::FieldError>& parse_errors,
                          const Observed& observed, api::UnixSeconds now) {
  ReconcileResult r = Reconciler(job, observed, now).run(parse_errors);
  // Every pass computes every condition from the spec it read.
  for (auto& c : r.status.conditions) c.observed_generation = job.meta.generation;
  return r;
}

}  // namespace ddp3d::op::controller
