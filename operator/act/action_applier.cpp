#include "operator/act/action_applier.h"

#include <ctime>
#include <variant>

#include "common/log.h"
#include "common/random_hex.h"
#include "operator/controller/desired_objects.h"
#include "operator/controller/event_object.h"
#include "operator/controller/slow_start.h"
#include "operator/kube/errors.h"

namespace ddp3d::op::act {

using web::json::value;
namespace c = controller;

namespace {

int64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

bool is_pod_request(const c::Action& a) {
  return std::holds_alternative<c::CreatePod>(a) || std::holds_alternative<c::DeletePod>(a);
}

// The expectation a request raises: the informer object it will show ("pod/NAME"), and whether
// it shows a deletion. Objects no informer watches raise none.
struct Expectation {
  std::string object;
  bool deletion = false;
};

Expectation expectation_of(const c::Action& a) {
  if (std::holds_alternative<c::CreatePod>(a)) return {"pod/" + c::target_of(a)};
  if (std::holds_alternative<c::CreateService>(a)) return {"service/" + c::target_of(a)};
  if (std::holds_alternative<c::CreateNetworkPolicy>(a))
    return {"networkpolicy/" + c::target_of(a)};
  if (std::holds_alternative<c::CreateWorkload>(a)) return {"workload/" + c::target_of(a)};
  if (const auto* d = std::get_if<c::DeletePod>(&a)) return {"pod/" + d->name, true};
  return {};
}

}  // namespace

// Sends one action's request.
struct ActionApplier::Sender {
  kube::Client& client;
  const std::string& key;
  const std::string& ns;
  const api::ObjectMeta& job_meta;
  const std::string& identity;
  c::EventAggregator& events;

  void operator()(const c::CreateService& a) const {
    client.create(kube::resources::services(), ns, a.object);
  }
  void operator()(const c::CreateNetworkPolicy& a) const {
    client.create(kube::resources::network_policies(), ns, a.object);
  }
  void operator()(const c::CreatePod& a) const {
    client.create(kube::resources::pods(), ns, a.object);
  }
  void operator()(const c::CreatePodGroup& a) const {
    const std::string api = a.object.at("apiVersion").as_string();
    const kube::Resource group{"scheduling.k8s.io", api.substr(api.find('/') + 1), "podgroups",
                               "PodGroup", true};
    client.create(group, ns, a.object);
  }
  void operator()(const c::CreateRendezvousSecret& a) const {
    value secret = a.object;
    secret["stringData"] = value::object();
    secret["stringData"][c::kRendezvousTokenKey] =
        value::string(random_hex(32, "a rendezvous token"));
    client.create(kube::resources::secrets(), ns, secret);
  }
  void operator()(const c::CreateWorkload& a) const {
    client.create(kube::resources::workloads(), ns, a.object);
  }
  void operator()(const c::UpdateWorkloadStatus& a) const {
    client.replace_status(kube::resources::workloads(), ns, a.object);
  }
  void operator()(const c::RemoveWorkloadFinalizer& a) const {
    value patch = value::object();
    patch["metadata"]["finalizers"] = a.remaining_finalizers;
    // The version read: a Workload changed since is decided on again, not patched blind.
    patch["metadata"]["resourceVersion"] = value::string(a.resource_version);
    client.patch(kube::resources::workloads(), ns, a.name, patch);
  }
  void operator()(const c::DeletePod& a) const {
    kube::DeleteOptions opts;
    opts.precondition_uid = a.uid;
    if (a.force) opts.grace_period_seconds = 0;
    client.remove(kube::resources::pods(), ns, a.name, opts);
  }
  void operator()(const c::DeleteJob& a) const {
    kube::DeleteOptions opts;
    opts.precondition_uid = a.uid;
    opts.propagation_policy = "Background";
    client.remove(kube::resources::training_jobs(), ns, a.name, opts);
  }
  void operator()(const c::RecordEvent& a) const {
    try {
      record(a);
    } catch (const std::exception& e) {
      // Events are best effort: losing one must not stop the reconcile.
      log::warning(key + ": could not record event " + a.reason + ": " + e.what());
    }
  }

  // A repeat within the window patches the Event already written; one gone since (deleted,
  // or expired by the API server's --event-ttl) is created anew.
  void record(const c::RecordEvent& a) const {
    const c::EventKey k{job_meta.uid, a.type, a.reason, c::event_message(a.message), c::kComponent};
    const int64_t now = now_ns();
    if (const auto repeat = events.repeat_of(k, now)) {
      try {
        client.patch(kube::resources::events(), ns, repeat->name,
                     c::event_repeat_patch(repeat->count, now));
        events.recorded(k, repeat->name, repeat->count, now);
        return;
      } catch (const kube::NotFoundError&) {
        events.forget(k);
      }
    }
    const value ev = c::event_object(job_meta, a.type, a.reason, a.message, now, identity);
    client.create(kube::resources::events(), ns, ev);
    events.recorded(k, kube::meta_name(ev), 1, now);
  }
};

ActionApplier::ActionApplier(kube::Client& client, c::ChildExpectations& in_flight,
                             std::string identity)
    : client_(client), in_flight_(in_flight), identity_(std::move(identity)) {}

void ActionApplier::apply(const std::string& key, const api::ObjectMeta& job_meta,
                          const c::Action& a) {
  const bool once = std::holds_alternative<c::CreateRendezvousSecret>(a) ||
                    std::holds_alternative<c::CreatePodGroup>(a);
  if (once && created_before(key, c::target_of(a))) return;
  const Expectation expected = expectation_of(a);
  const auto now = c::Clock::now();
  if (!expected.object.empty()) {
    if (expected.deletion) {
      in_flight_.expect_delete(key, expected.object, now);
    } else {
      in_flight_.expect_create(key, expected.object, now);
    }
  }
  // A failed request produces no event to meet the expectation: lower it now.
  auto lower = [&] {
    if (expected.object.empty()) return;
    if (expected.deletion) {
      in_flight_.deleted(key, expected.object);
    } else {
      in_flight_.created(key, expected.object);
    }
  };
  try {
    std::visit(Sender{client_, key, job_meta.namespace_, job_meta, identity_, events_}, a);
  } catch (const kube::AlreadyExistsError&) {
    // It exists because an earlier pass (or replica) created it. The cache may already hold
    // it, so no event is owed.
    lower();
  } catch (const kube::NotFoundError&) {
    lower();  // already gone
  } catch (const kube::ConflictError&) {
    // A precondition failed (delete uid, Workload resourceVersion): the object changed since it
    // was read; the event that shows the change brings the job back to decide again.
    lower();
  } catch (...) {
    lower();
    throw;
  }
  if (once) remember_created(key, c::target_of(a));
}

std::exception_ptr ActionApplier::apply_all(const std::string& key, const api::ObjectMeta& job_meta,
                                            const std::vector<c::Action>& actions,
                                            const std::function<void(const c::Action&)>& applied) {
  auto apply_one = [&](const c::Action& a) {
    try {
      apply(key, job_meta, a);
    } catch (const std::exception& e) {
      log::warning(key + ": " + c::kind_of(a) + " " + c::target_of(a) + " failed: " + e.what());
      throw;
    }
    if (applied) applied(a);
    if (!std::holds_alternative<c::RecordEvent>(a)) {
      log::debug(key + ": " + c::kind_of(a) + " " + c::target_of(a));
    }
  };
  // The Service before the pods and the Events after them keep their order; a run of pod
  // requests goes out concurrently (a 64-node gang in a few round trips).
  std::exception_ptr first_error;
  for (std::size_t i = 0; i < actions.size();) {
    std::size_t end = i + 1;
    if (is_pod_request(actions[i]))
      while (end < actions.size() && is_pod_request(actions[end])) ++end;
    auto error = c::run_slow_start(end - i, kMaxConcurrentPodRequests,
                                   [&](std::size_t k) { apply_one(actions[i + k]); });
    if (error && !first_error) first_error = error;
    i = end;
  }
  return first_error;
}

bool ActionApplier::created_before(const std::string& key, const std::string& name) {
  const std::lock_guard lock(created_mutex_);
  const auto it = created_once_.find(key);
  return it != created_once_.end() && it->second.count(name);
}

void ActionApplier::remember_created(const std::string& key, const std::string& name) {
  const std::lock_guard lock(created_mutex_);
  created_once_[key].insert(name);
}

void ActionApplier::forget(const std::string& key) {
  const std::lock_guard lock(created_mutex_);
  created_once_.erase(key);
}

}  // namespace ddp3d::op::act
