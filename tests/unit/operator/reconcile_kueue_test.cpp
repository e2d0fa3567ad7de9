// Reconcile of jobs labelled kueue.x-k8s.io/queue-name: no pod before Kueue admits the job's
// Workload; on eviction the ranks stop (and checkpoint) before the admission is released,
// without spending backoffLimit or disruptionLimit; re-admission resumes as a new attempt.
#include <gtest/gtest.h>

#include "job_fixtures.h"
#include "operator/api/names.h"
#include "operator/controller/conditions.h"
#include "operator/controller/kueue_workload.h"
#include "operator/controller/reconcile.h"

namespace ddp3d::op::controller {
namespace {

using api::Phase;
using testing::all;
using testing::count;
using testing::kT0;
using testing::name_of;
using testing::parse;
using testing::pod;
using testing::Pods;
using web::json::value;

api::TrainingJob queued_job(int nnodes = 2) {
  value v = testing::job_json("pp", nnodes, 0);
  v["metadata"]["labels"][kueue::kQueueNameLabel] = value::string("team-a");
  auto j = api::parse_training_job(v).job;
  j.spec.network.rendezvous_secret = false;
  return j;
}

// A Workload as Kueue leaves it: admitted for `count` pods on flavor "fast" or pending.
value workload(bool admitted, int count = 2) {
  value w = parse(R"({
    "metadata": {"name": "pp-workload", "uid": "w-1", "resourceVersion": "7", "generation": 1,
                 "finalizers": ["kueue.x-k8s.io/resource-in-use"]},
    "spec": {"queueName": "team-a", "podSets": [{"name": "ranks", "count": 2}]},
    "status": {"conditions": [
      {"type": "QuotaReserved", "status": "False", "reason": "Pending",
       "message": "couldn't assign flavors to pod set ranks: insufficient quota"}]}})");
  if (admitted) {
    w["status"] = parse(R"({
      "admission": {"clusterQueue": "cq", "podSetAssignments": [
        {"name": "ranks", "count": 2, "flavors": {"example.com/gpu": "fast"}}]},
      "conditions": [
        {"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved", "message": ""},
        {"type": "Admitted", "status": "True", "reason": "Admitted", "message": ""}]})");
    w["status"]["admission"]["podSetAssignments"][0]["count"] = value::number(count);
  }
  return w;
}

value with_eviction(value w, const std::string& reason) {
  auto& conds = w["status"]["conditions"];
  value c = value::object();
  c["type"] = value::string("Evicted");
  c["status"] = value::string("True");
  c["reason"] = value::string(reason);
  c["message"] = value::string("Preempted to accommodate a higher priority workload");
  conds[conds.size()] = c;
  return w;
}

Observed observed(const api::TrainingJob& j, Pods pods, std::optional<value> w,
                  bool served = true) {
  Observed o;
  o.pods = std::move(pods);
  o.services.push_back({api::service_name(j.meta.name), "svc-uid"});
  ObservedKueue k;
  k.served = served;
  if (w) k.workload = kueue::observe_workload(*w);
  kueue::FlavorPlacement fast;
  fast.node_labels["pool"] = "fast";
  fast.tolerations[0] = parse(R"({"key": "fast", "operator": "Exists"})");
  k.flavors["fast"] = fast;
  o.kueue = k;
  return o;
}

Pods running(const api::TrainingJob& j, int n, int attempt) {
  Pods out;
  for (int r = 0; r < n; ++r) out.push_back(pod(j, r, attempt, "Running"));
  return out;
}

TEST(ReconcileKueue, WithoutKueueTheJobWaitsAndSaysSo) {
  const auto j = queued_job();
  const auto r = reconcile(j, {}, observed(j, {}, std::nullopt, false), kT0);
  EXPECT_EQ(r.status.phase, Phase::kQueued);
  EXPECT_EQ(r.status.reason, "KueueNotServed");
  EXPECT_NE(r.status.message.find("team-a"), std::string::npos) << r.status.message;
  EXPECT_EQ(count<CreatePod>(r), 0);
  EXPECT_EQ(count<CreateWorkload>(r), 0);
  EXPECT_EQ(r.requeue_after_seconds, 30);
  const auto* c = find_condition(r.status.conditions, kCondQueued);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, "True");
}

TEST(ReconcileKueue, TheFirstPassCreatesTheWorkloadAndNoPod) {
  const auto j = queued_job();
  const auto r = reconcile(j, {}, observed(j, {}, std::nullopt), kT0);
  ASSERT_EQ(count<CreateWorkload>(r), 1);
  EXPECT_EQ(name_of(all<CreateWorkload>(r)[0]->object), "pp-workload");
  EXPECT_EQ(count<CreatePod>(r), 0);
  EXPECT_EQ(r.status.phase, Phase::kQueued);
  EXPECT_EQ(r.status.reason, "Pending");
}

TEST(ReconcileKueue, APendingWorkloadKeepsTheJobQueuedWithKueuesReason) {
  const auto j = queued_job();
  const auto r = reconcile(j, {}, observed(j, {}, workload(false)), kT0);
  EXPECT_EQ(r.status.phase, Phase::kQueued);
  EXPECT_EQ(r.status.reason, "Pending");
  EXPECT_EQ(
      r.status.message,
      "waiting in queue team-a: couldn't assign flavors to pod set ranks: insufficient quota");
  EXPECT_EQ(count<CreatePod>(r), 0);
  EXPECT_EQ(count<CreateWorkload>(r), 0);
}

TEST(ReconcileKueue, AdmissionCreatesThePodsOnTheFlavorsNodes) {
  auto j = queued_job();
  j.status = reconcile(j, {}, observed(j, {}, workload(false)), kT0).status;
  const auto r = reconcile(j, {}, observed(j, {}, workload(true)), kT0 + 5);
  ASSERT_EQ(count<CreatePod>(r), 2);
  for (const auto* a : all<CreatePod>(r)) {
    const value& spec = a->object.at("spec");
    EXPECT_EQ(spec.at("nodeSelector").at("pool").as_string(), "fast");
    bool tolerated = false;
    for (const auto& t : spec.at("tolerations").as_array())
      tolerated |= t.at("key").as_string() == "fast";
    EXPECT_TRUE(tolerated);
  }
  EXPECT_EQ(r.status.attempt, 0) << "a first admission is the first attempt";
  EXPECT_EQ(r.status.phase, Phase::kPending);
  bool admitted_event = false;
  for (const auto* e : all<RecordEvent>(r)) admitted_event |= e->reason == "Admitted";
  EXPECT_TRUE(admitted_event);
  EXPECT_EQ(find_condition(r.status.conditions, kCondQueued)->status, "False");
}

TEST(ReconcileKueue, AnEvictionStopsTheRanksThenReleasesTheQuotaWithoutSpendingRetries) {
  auto j = queued_job();
  j.status.phase = Phase::kRunning;
  j.status.attempt = 0;
  j.status.attempt_start_time = api::format_rfc3339(kT0 - 100);
  const value evicted = with_eviction(workload(true), "Preempted");
  auto r = reconcile(j, {}, observed(j, running(j, 2, 0), evicted), kT0);
  EXPECT_EQ(count<DeletePod>(r), 2);
  for (const auto* d : all<DeletePod>(r)) EXPECT_FALSE(d->force) << "SIGTERM, then checkpoint";
  EXPECT_EQ(count<UpdateWorkloadStatus>(r), 0) << "the quota is held until the ranks stopped";
  EXPECT_EQ(r.status.phase, Phase::kQueued);
  EXPECT_EQ(r.status.reason, "Evicted");
  EXPECT_EQ(r.status.restarts, 0);
  EXPECT_EQ(r.status.disruptions, 0);

  // The ranks are gone: the admission is released the way Kueue's integrations do it.
  j.status = r.status;
  r = reconcile(j, {}, observed(j, {}, evicted), kT0 + 20);
  const auto released = all<UpdateWorkloadStatus>(r);
  ASSERT_EQ(released.size(), 1u);
  const auto w = kueue::observe_workload(released[0]->object);
  EXPECT_FALSE(w.has_admission);
  EXPECT_FALSE(w.admitted);
  EXPECT_EQ(count<CreatePod>(r), 0);

  // Kueue admits it again: the next attempt resumes (from the ranks' checkpoint).
  j.status = r.status;
  r = reconcile(j, {}, observed(j, {}, workload(true)), kT0 + 40);
  EXPECT_EQ(r.status.attempt, 1);
  EXPECT_EQ(count<CreatePod>(r), 2);
  EXPECT_EQ(r.status.restarts, 0);
  EXPECT_EQ(r.status.disruptions, 0);
}

TEST(ReconcileKueue, WaitingAfterAnEvictionStillSaysWhy) {
  auto j = queued_job();
  j.status.phase = Phase::kQueued;
  value w = with_eviction(workload(false), "Preempted");
  const auto r = reconcile(j, {}, observed(j, {}, w), kT0);
  EXPECT_EQ(r.status.reason, "Evicted");
  EXPECT_NE(r.status.message.find("waiting in queue team-a"), std::string::npos);
  EXPECT_NE(r.status.message.find("Preempted"), std::string::npos);
}

TEST(ReconcileKueue, PartialAdmissionRunsAnElasticJobAtTheAdmittedSize) {
  auto j = queued_job(3);
  j.spec.elastic = api::ElasticSpec{2, 60, 300};
  j.status.phase = Phase::kQueued;
  auto r = reconcile(j, {}, observed(j, {}, workload(true, 2)), kT0);
  EXPECT_EQ(r.status.size, 2);
  EXPECT_EQ(count<CreatePod>(r), 2);
  // Running at 2 of 3: it does not look for room beyond what Kueue admitted.
  j.status = r.status;
  r = reconcile(j, {}, observed(j, running(j, 2, 0), workload(true, 2)), kT0 + 400);
  EXPECT_EQ(r.status.phase, Phase::kRunning);
  EXPECT_EQ(count<CreatePod>(r), 0) << "no grow probe";
  EXPECT_FALSE(r.status.next_grow_time);
}

TEST(ReconcileKueue, PodsReadyIsReportedOnceAllRanksRun) {
  auto j = queued_job();
  j.status.phase = Phase::kStarting;
  j.status.attempt_start_time = api::format_rfc3339(kT0);
  Pods starting = running(j, 2, 0);
  starting[1].phase = "Pending";
  auto r = reconcile(j, {}, observed(j, starting, workload(true)), kT0 + 1);
  ASSERT_EQ(count<UpdateWorkloadStatus>(r), 1);
  EXPECT_EQ(kueue::observe_workload(all<UpdateWorkloadStatus>(r)[0]->object).pods_ready_reason,
            "WaitForStart");
  r = reconcile(j, {}, observed(j, running(j, 2, 0), workload(true)), kT0 + 2);
  ASSERT_EQ(count<UpdateWorkloadStatus>(r), 1);
  const value started = all<UpdateWorkloadStatus>(r)[0]->object;
  EXPECT_EQ(kueue::observe_workload(started).pods_ready_reason, "Started");
  // Already said: nothing to write.
  j.status = r.status;
  r = reconcile(j, {}, observed(j, running(j, 2, 0), started), kT0 + 3);
  EXPECT_EQ(count<UpdateWorkloadStatus>(r), 0);
}

TEST(ReconcileKueue, AFinishedJobFinishesItsWorkloadThenLetsGoOfIt) {
  auto j = queued_job();
  j.status.phase = Phase::kSucceeded;
  j.status.message = "all 2 nodes completed";
  auto r = reconcile(j, {}, observed(j, {}, workload(true)), kT0);
  ASSERT_EQ(count<UpdateWorkloadStatus>(r), 1);
  const value finished = all<UpdateWorkloadStatus>(r)[0]->object;
  EXPECT_TRUE(kueue::observe_workload(finished).finished);
  r = reconcile(j, {}, observed(j, {}, finished), kT0 + 1);
  ASSERT_EQ(count<RemoveWorkloadFinalizer>(r), 1);
  EXPECT_EQ(all<RemoveWorkloadFinalizer>(r)[0]->resource_version, "7");
  EXPECT_EQ(all<RemoveWorkloadFinalizer>(r)[0]->remaining_finalizers.size(), 0u);
}

TEST(ReconcileKueue, AWorkloadDeletedByHandStopsThePodsThenIsLetGo) {
  auto j = queued_job();
  j.status.phase = Phase::kRunning;
  value w = workload(true);
  w["metadata"]["deletionTimestamp"] = value::string("2026-11-30T10:00:00Z");
  w["metadata"]["finalizers"][1] = value::string("example.com/keep");
  auto r = reconcile(j, {}, observed(j, running(j, 2, 0), w), kT0);
  EXPECT_EQ(count<DeletePod>(r), 2);
  EXPECT_EQ(count<RemoveWorkloadFinalizer>(r), 0) << "not while a rank runs";
  EXPECT_EQ(r.status.reason, "WorkloadDeleted");
  j.status = r.status;
  r = reconcile(j, {}, observed(j, {}, w), kT0 + 10);
  ASSERT_EQ(count<RemoveWorkloadFinalizer>(r), 1);
  const value& rest = all<RemoveWorkloadFinalizer>(r)[0]->remaining_finalizers;
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(rest.at(0).as_string(), "example.com/keep");
  // Once it is gone, a new Workload queues the job again.
  j.status = r.status;
  r = reconcile(j, {}, observed(j, {}, std::nullopt), kT0 + 20);
  EXPECT_EQ(count<CreateWorkload>(r), 1);
}

TEST(ReconcileKueue, WithKueueOffInTheOperatorTheJobWaits) {
  const auto j = queued_job();
  auto o = observed(j, {}, std::nullopt, false);
  o.kueue->disabled = true;
  const auto r = reconcile(j, {}, o, kT0);
  EXPECT_EQ(r.status.phase, Phase::kQueued);
  EXPECT_EQ(r.status.reason, "KueueDisabled");
  EXPECT_EQ(count<CreatePod>(r), 0);
  EXPECT_EQ(count<CreateWorkload>(r), 0);
}

TEST(ReconcileKueue, AQueuedJobWhoseLabelIsRemovedStarts) {
  auto j = testing::job("pp", 2, 0);  // no label any more
  j.status.phase = Phase::kQueued;
  const auto r = reconcile(j, {}, Observed{}, kT0);
  EXPECT_EQ(r.status.phase, Phase::kPending);
  EXPECT_EQ(r.status.reason, "Resumed");
  bool said = false;
  for (const auto* e : all<RecordEvent>(r)) {
    said |= e->reason == "Resumed" &&
            e->message.find("label kueue.x-k8s.io/queue-name removed") != std::string::npos;
  }
  EXPECT_TRUE(said);
  EXPECT_EQ(count<CreatePod>(r), 2);
}

TEST(ReconcileKueue, JobsWithoutTheLabelNeverTouchKueue) {
  auto j = testing::job("pp", 2, 0);
  Observed o;
  const auto r = reconcile(j, {}, o, kT0);
  EXPECT_EQ(count<CreatePod>(r), 2);
  EXPECT_EQ(count<CreateWorkload>(r), 0);
  EXPECT_NE(r.status.phase, Phase::kQueued);
}

}  // namespace
}  // namespace ddp3d::op::controller
