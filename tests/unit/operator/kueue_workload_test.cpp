// Kueue's Workload for a TrainingJob: built, read and released as Kueue's own job
// integrations do, on the object shapes a real Kueue v0.17 returns (tests/cluster/README.md).
#include "operator/controller/kueue_workload.h"

#include <gtest/gtest.h>

#include "job_fixtures.h"
#include "operator/api/names.h"

namespace ddp3d::op::controller::kueue {
namespace {

using testing::job_json;
using testing::kT0;
using testing::parse;
using web::json::value;

api::TrainingJob queued_job(const std::string& name = "pp", int nnodes = 2) {
  value v = job_json(name, nnodes, 8);
  v["metadata"]["labels"] = value::object();
  v["metadata"]["labels"][kQueueNameLabel] = value::string("team-a");
  return api::parse_training_job(v).job;
}

// An admitted Workload as the API server returned it on the test cluster.
value admitted() {
  return parse(R"({
    "metadata": {"name": "pp-workload", "uid": "w-1", "generation": 1,
                 "finalizers": ["kueue.x-k8s.io/resource-in-use"]},
    "spec": {"queueName": "team-a", "podSets": [{"name": "ranks", "count": 2}]},
    "status": {
      "admission": {"clusterQueue": "cq", "podSetAssignments": [
        {"count": 2, "flavors": {"cpu": "default-flavor", "nvidia.com/gpu": "a100"},
         "name": "ranks", "resourceUsage": {"cpu": "2"}}]},
      "conditions": [
        {"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved",
         "message": "Quota reserved in ClusterQueue cq", "observedGeneration": 1,
         "lastTransitionTime": "2026-11-30T10:00:00Z"},
        {"type": "Admitted", "status": "True", "reason": "Admitted",
         "message": "The workload is admitted", "observedGeneration": 1,
         "lastTransitionTime": "2026-11-30T10:00:00Z"}]}
  })");
}

const value* find(const value& status, const std::string& type) {
  for (const auto& c : status.at("conditions").as_array()) {
    if (c.at("type").as_string() == type) return &c;
  }
  return nullptr;
}

TEST(KueueWorkload, QueueNameComesFromTheLabel) {
  EXPECT_EQ(queue_name(queued_job()), "team-a");
  EXPECT_EQ(queue_name(testing::job()), std::nullopt);
}

TEST(KueueWorkload, DesiredWorkloadIsOwnedByTheJobWithOnePodSetOfItsRanks) {
  const auto j = queued_job("pp", 3);
  const value w = desired_workload(j, "team-a", std::nullopt);
  EXPECT_EQ(w.at("apiVersion").as_string(), "kueue.x-k8s.io/v1beta2");
  EXPECT_EQ(w.at("kind").as_string(), "Workload");
  const value& meta = w.at("metadata");
  EXPECT_EQ(meta.at("name").as_string(), "pp-workload");
  EXPECT_EQ(meta.at("namespace").as_string(), "ml");
  EXPECT_EQ(meta.at("labels").at(kJobUidLabel).as_string(), "uid-1");
  EXPECT_EQ(meta.at("labels").at(api::kLabelJobName).as_string(), "pp");
  EXPECT_EQ(meta.at("finalizers").at(0).as_string(), kResourceInUseFinalizer);
  const value& owner = meta.at("ownerReferences").at(0);
  EXPECT_EQ(owner.at("kind").as_string(), "TrainingJob");
  EXPECT_EQ(owner.at("uid").as_string(), "uid-1");
  EXPECT_TRUE(owner.at("controller").as_bool());
  const value& spec = w.at("spec");
  EXPECT_EQ(spec.at("queueName").as_string(), "team-a");
  ASSERT_EQ(spec.at("podSets").size(), 1u);
  const value& set = spec.at("podSets").at(0);
  EXPECT_EQ(set.at("name").as_string(), kPodSetName);
  EXPECT_EQ(set.at("count").as_integer(), 3);
  EXPECT_FALSE(set.has_field("minCount")) << "not elastic: all or nothing";
  // What Kueue charges to the quota: the ranks' container requests (8 GPUs each).
  const value& container = set.at("template").at("spec").at("containers").at(0);
  EXPECT_EQ(container.at("resources").at("limits").at("nvidia.com/gpu").as_string(), "8");
  EXPECT_FALSE(spec.has_field("priorityClassRef"));
  EXPECT_FALSE(spec.has_field("priority"));
}

TEST(KueueWorkload, AnElasticJobOffersItsMinimumForPartialAdmission) {
  value v = job_json("pp", 4, 8);
  v["metadata"]["labels"][kQueueNameLabel] = value::string("team-a");
  v["spec"]["elastic"]["minNodes"] = value::number(2);
  const auto j = api::parse_training_job(v).job;
  const value w = desired_workload(j, "team-a", std::nullopt);
  EXPECT_EQ(w.at("spec").at("podSets").at(0).at("minCount").as_integer(), 2);
  EXPECT_EQ(w.at("spec").at("podSets").at(0).at("count").as_integer(), 4);
}

TEST(KueueWorkload, APriorityClassComesWithItsValue) {
  value v = job_json("pp", 2, 8);
  v["spec"]["template"]["spec"]["priorityClassName"] = value::string("high");
  const auto j = api::parse_training_job(v).job;
  const value w = desired_workload(j, "team-a", 1000);
  const value& spec = w.at("spec");
  EXPECT_EQ(spec.at("priorityClassRef").at("name").as_string(), "high");
  EXPECT_EQ(spec.at("priorityClassRef").at("kind").as_string(), "PriorityClass");
  EXPECT_EQ(spec.at("priorityClassRef").at("group").as_string(), "scheduling.k8s.io");
  EXPECT_EQ(spec.at("priority").as_integer(), 1000);
}

TEST(KueueWorkload, LongJobNamesGiveAValidWorkloadName) {
  const std::string long_name(200, 'x');
  const std::string name = api::workload_name(long_name);
  EXPECT_TRUE(api::is_dns1123_label(name)) << name;
  EXPECT_NE(name, api::workload_name(std::string(199, 'x') + "y"));
  EXPECT_EQ(name, api::workload_name(long_name));
}

TEST(KueueWorkload, AnAdmittedWorkloadGivesItsCountAndFlavors) {
  const auto w = observe_workload(admitted());
  EXPECT_EQ(w.name, "pp-workload");
  EXPECT_TRUE(w.has_finalizer);
  EXPECT_EQ(w.queue_name, "team-a");
  EXPECT_EQ(w.pod_count, 2);
  EXPECT_TRUE(w.admitted);
  EXPECT_EQ(w.admitted_count, 2);
  EXPECT_EQ(w.flavors.at("nvidia.com/gpu"), "a100");
  EXPECT_FALSE(w.evicted);
  EXPECT_FALSE(w.finished);
}

TEST(KueueWorkload, APendingWorkloadSaysWhy) {
  const auto w = observe_workload(parse(R"({
    "metadata": {"name": "pp-workload"},
    "status": {"conditions": [{"type": "QuotaReserved", "status": "False", "reason": "Pending",
      "message": "couldn't assign flavors to pod set ranks: insufficient quota for cpu"}]}
  })"));
  EXPECT_FALSE(w.admitted);
  EXPECT_FALSE(w.has_admission);
  EXPECT_EQ(w.pending_reason, "Pending");
  EXPECT_NE(w.pending_message.find("insufficient quota"), std::string::npos);
}

TEST(KueueWorkload, QuotaReservedWithoutAdmittedIsNotAdmission) {
  value v = admitted();
  v["status"]["conditions"][1]["status"] = value::string("False");
  EXPECT_FALSE(observe_workload(v).admitted);
  EXPECT_TRUE(observe_workload(v).has_admission) << "quota is still held";
}

TEST(KueueWorkload, APreemptedWorkloadIsReleasedAndRequeued) {
  value v = admitted();
  v["status"]["conditions"][2] = parse(R"({"type": "Evicted", "status": "True",
    "reason": "Preempted", "message": "Preempted to accommodate a workload, UID w-2",
    "lastTransitionTime": "2026-11-30T10:05:00Z"
})");
  const auto evicted = observe_workload(v);
  EXPECT_TRUE(evicted.evicted);
  EXPECT_EQ(evicted.evicted_reason, "Preempted");
  EXPECT_TRUE(evicted.admitted) << "Kueue keeps the admission until the job releases it";

  value released = v;
  released["status"] = released_status(v, kT0);
  EXPECT_FALSE(released.at("status").has_field("admission"));
  const auto w = observe_workload(released);
  EXPECT_FALSE(w.admitted);
  EXPECT_FALSE(w.has_admission);
  EXPECT_EQ(find(released.at("status"), "QuotaReserved")->at("reason").as_string(), "Pending");
  EXPECT_EQ(find(released.at("status"), "Admitted")->at("status").as_string(), "False");
  EXPECT_EQ(find(released.at("status"), "Admitted")->at("reason").as_string(), "NoReservation");
  const value* requeued = find(released.at("status"), "Requeued");
  ASSERT_NE(requeued, nullptr);
  EXPECT_EQ(requeued->at("status").as_string(), "True");
  EXPECT_EQ(requeued->at("observedGeneration").as_integer(), 1);
  // The eviction stays on record: it is Kueue's condition, not the job's.
  EXPECT_EQ(find(released.at("status"), "Evicted")->at("status").as_string(), "True");
}

TEST(KueueWorkload, AStoppedQueueIsReleasedWithoutARequeue) {
  value v = admitted();
  v["status"]["conditions"][2] = parse(R"({"type": "Evicted", "status": "True",
    "reason": "ClusterQueueStopped", "message": "The ClusterQueue is stopped"})");
  const value status = released_status(v, kT0);
  const value* requeued = find(status, "Requeued");
  ASSERT_NE(requeued, nullptr);
  EXPECT_EQ(requeued->at("status").as_string(), "False");
  EXPECT_EQ(requeued->at("reason").as_string(), "ClusterQueueStopped");
}

TEST(KueueWorkload, AConditionKeepsItsTransitionTimeUntilItChanges) {
  const value v = admitted();
  value s = status_with_condition(v, "PodsReady", false, "WaitForStart", "pods starting", kT0);
  const std::string t0 = find(s, "PodsReady")->at("lastTransitionTime").as_string();
  value again = v;
  again["status"] = s;
  s = status_with_condition(again, "PodsReady", false, "WaitForStart", "still", kT0 + 10);
  EXPECT_EQ(find(s, "PodsReady")->at("lastTransitionTime").as_string(), t0);
  again["status"] = s;
  s = status_with_condition(again, "PodsReady", true, "Started", "all pods ready", kT0 + 20);
  EXPECT_EQ(find(s, "PodsReady")->at("lastTransitionTime").as_string(),
            api::format_rfc3339(kT0 + 20));
  EXPECT_EQ(observe_workload(value::object()).pods_ready_reason, "");
  again["status"] = s;
  EXPECT_EQ(observe_workload(again).pods_ready_reason, "Started");
}

TEST(KueueWorkload, HostileShapesAreReadAsNothing) {
  for (const char* text :
       {R"([])", R"({"metadata": 5})", R"({"spec": {"podSets": "x"}})",
        R"({"status": {"admission": {"podSetAssignments": [{"count": -3}]}}})",
        R"({"status": {"admission": {"podSetAssignments": [{"count": 1e300}]}}})",
        R"({"status": {"conditions": [1, "x", {"type": 7}]}})",
        R"({"metadata": {"finalizers": [1, null]}})"}) {
    const auto w = observe_workload(parse(text));
    EXPECT_FALSE(w.admitted) << text;
    EXPECT_EQ(w.admitted_count, std::nullopt) << text;
  }
  EXPECT_NO_THROW(released_status(parse(R"({"status": 3})"), kT0));
}

}  // namespace
}  // namespace ddp3d::op::controller::kueue
