// Elastic size in reconcile (spec.elastic): an attempt that cannot be placed restarts smaller,
// never below minNodes; a smaller job looks for room with probe pods and grows back when they
// are placed; the pods, PodGroup and environment follow the attempt's size.
#include <gtest/gtest.h>

#include <map>

#include "job_fixtures.h"
#include "operator/api/names.h"
#include "operator/api/validation.h"
#include "operator/controller/conditions.h"
#include "operator/controller/reconcile.h"

namespace ddp3d::op::controller {
namespace {

using api::Phase;
using testing::all;
using testing::count;
using testing::first_index;
using testing::job;
using testing::kT0;
using testing::name_of;
using testing::pod;
using testing::Pods;
constexpr const char* kApi = "scheduling.k8s.io/v1alpha2";

api::TrainingJob elastic_job(int nnodes, int min_nodes) {
  auto j = job("pp", nnodes, 0);
  j.spec.network.rendezvous_secret = false;
  j.spec.elastic = api::ElasticSpec{min_nodes, 60, 300};
  return j;
}

Observed observed(const api::TrainingJob& j, Pods pods, std::string api = kApi) {
  Observed o;
  o.pods = std::move(pods);
  o.services.push_back({api::service_name(j.meta.name), "svc-uid"});
  o.pod_group_api = std::move(api);
  return o;
}

ObservedPod unplaced(const api::TrainingJob& j, int rank, int attempt) {
  ObservedPod p = pod(j, rank, attempt, "Pending");
  p.unschedulable_reason = "Unschedulable";
  p.unschedulable_message = "0/3 nodes are available: 3 Insufficient example.com/accelerator.";
  return p;
}

ObservedPod running_on(const api::TrainingJob& j, int rank, int attempt, const std::string& node) {
  ObservedPod p = pod(j, rank, attempt, "Running");
  p.node_name = node;
  return p;
}

ObservedPod probe(const api::TrainingJob& j, int index, int attempt, const std::string& node) {
  ObservedPod p;
  p.name = api::grow_probe_name(j.meta.name, index);
  p.uid = p.name + "-uid";
  p.attempt = attempt;
  p.grow_probe = true;
  p.phase = node.empty() ? "Pending" : "Running";
  p.node_name = node;
  return p;
}

std::map<std::string, std::string> env_of(const web::json::value& pod) {
  std::map<std::string, std::string> m;
  for (const auto& e : pod.at("spec").at("containers").at(0).at("env").as_array()) {
    if (e.has_field("value")) m[e.at("name").as_string()] = e.at("value").as_string();
  }
  return m;
}

// Attempt 0 of a 3-node job whose pods wait for room, started at kT0.
api::TrainingJob waiting_job() {
  auto j = elastic_job(3, 2);
  j.status.phase = Phase::kPending;
  j.status.size = 3;
  j.status.attempt_start_time = api::format_rfc3339(kT0);
  return j;
}

TEST(ReconcileElastic, AGangThatIsNotPlacedInTimeRestartsOneNodeSmaller) {
  const auto j = waiting_job();
  const Pods pods = {unplaced(j, 0, 0), unplaced(j, 1, 0), unplaced(j, 2, 0)};

  // Before placementTimeoutSeconds: nothing changes; a requeue is due when it ends.
  auto r = reconcile(j, {}, observed(j, pods), kT0 + 59);
  EXPECT_TRUE(all<DeletePod>(r).empty());
  EXPECT_EQ(r.status.attempt, 0);
  EXPECT_EQ(r.status.size, 3);
  ASSERT_TRUE(r.requeue_after_seconds);
  EXPECT_EQ(*r.requeue_after_seconds, 1);

  r = reconcile(j, {}, observed(j, pods), kT0 + 60);
  EXPECT_EQ(all<DeletePod>(r).size(), 3u);
  EXPECT_TRUE(all<CreatePod>(r).empty());
  EXPECT_EQ(r.status.attempt, 1);
  EXPECT_EQ(r.status.size, 2);
  EXPECT_EQ(r.status.restarts, 0);
  EXPECT_EQ(r.status.disruptions, 0);
  EXPECT_EQ(r.status.phase, Phase::kRestarting);
  EXPECT_EQ(r.status.reason, "PlacementTimeout");
  EXPECT_NE(r.status.message.find("3 of attempt 0's 3 pods not placed on a node 60s after it "
                                  "started (elastic.placementTimeoutSeconds=60): 0/3 nodes are "
                                  "available"),
            std::string::npos)
      << r.status.message;
  EXPECT_NE(r.status.message.find("restarting on 2 of 3 nodes (was 3) as attempt 1"),
            std::string::npos);
  ASSERT_TRUE(r.status.next_grow_time);
  EXPECT_EQ(*r.status.next_grow_time, api::format_rfc3339(kT0 + 60 + 300));
  const auto* c = find_condition(r.status.conditions, kCondFullSize);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, "False");
  EXPECT_EQ(c->reason, "PlacementTimeout");

  // The next attempt: a PodGroup of 2 and 2 pods told they are 2 of a batch world of 3.
  auto next = j;
  next.status = r.status;
  r = reconcile(next, {}, observed(next, {}), kT0 + 61);
  const auto groups = all<CreatePodGroup>(r);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(name_of(groups[0]->object), "pp-gang-1");
  EXPECT_EQ(
      groups[0]->object.at("spec").at("schedulingPolicy").at("gang").at("minCount").as_integer(),
      2);
  const auto created = all<CreatePod>(r);
  ASSERT_EQ(created.size(), 2u);
  for (const auto* a : created) {
    const auto env = env_of(a->object);
    EXPECT_EQ(env.at("NNODES"), "2");
    EXPECT_EQ(env.at("WORLD_SIZE"), "2");
    EXPECT_EQ(env.at("DDP3D_BATCH_WORLD_SIZE"), "3");
    EXPECT_EQ(env.at("DDP3D_ATTEMPT"), "1");
  }
  EXPECT_EQ(r.status.nodes.size(), 2u);
}

TEST(ReconcileElastic, NeverBelowMinNodesAndNotAtAllWithoutElastic) {
  auto j = waiting_job();
  j.status.size = 2;
  const Pods at_min = {unplaced(j, 0, 0), unplaced(j, 1, 0)};
  auto r = reconcile(j, {}, observed(j, at_min), kT0 + 600);
  EXPECT_TRUE(all<DeletePod>(r).empty());
  EXPECT_EQ(r.status.size, 2);
  EXPECT_EQ(r.status.attempt, 0);

  auto fixed = waiting_job();
  fixed.spec.elastic.reset();
  const Pods unplaced_pods = {unplaced(j, 0, 0), unplaced(j, 1, 0), unplaced(j, 2, 0)};
  r = reconcile(fixed, {}, observed(fixed, unplaced_pods), kT0 + 600);
  EXPECT_TRUE(all<DeletePod>(r).empty());
  EXPECT_EQ(r.status.size, 3);
  EXPECT_EQ(find_condition(r.status.conditions, kCondFullSize), nullptr);
}

TEST(ReconcileElastic, PlacedOneByOneItShrinksToThePodsThatFoundRoom) {
  auto j = elastic_job(4, 1);
  j.status.phase = Phase::kStarting;
  j.status.size = 4;
  j.status.attempt_start_time = api::format_rfc3339(kT0);
  const Pods pods = {running_on(j, 0, 0, "n1"), running_on(j, 1, 0, "n2"), unplaced(j, 2, 0),
                     unplaced(j, 3, 0)};
  const auto r = reconcile(j, {}, observed(j, pods, ""), kT0 + 60);
  EXPECT_EQ(r.status.size, 2);
  EXPECT_EQ(r.status.attempt, 1);
}

// A job on 2 of 3 nodes, Running as attempt 1 since kT0; its next look for room is due at
// kT0 + 300.
api::TrainingJob small_job() {
  auto j = elastic_job(3, 2);
  j.status.phase = Phase::kRunning;
  j.status.attempt = 1;
  j.status.size = 2;
  j.status.size_since = api::format_rfc3339(kT0);
  j.status.next_grow_time = api::format_rfc3339(kT0 + 300);
  j.status.attempt_start_time = api::format_rfc3339(kT0);
  j.status.start_time = api::format_rfc3339(kT0);
  return j;
}

TEST(ReconcileElastic, ASmallerJobLooksForRoomWithProbePodsEveryGrowInterval) {
  const auto j = small_job();
  const Pods pods = {running_on(j, 0, 1, "n1"), running_on(j, 1, 1, "n2")};
  auto r = reconcile(j, {}, observed(j, pods), kT0 + 299);
  EXPECT_TRUE(all<CreatePod>(r).empty());
  EXPECT_FALSE(r.status.grow_probe_time);
  ASSERT_TRUE(r.requeue_after_seconds);
  EXPECT_EQ(*r.requeue_after_seconds, 1);

  r = reconcile(j, {}, observed(j, pods), kT0 + 300);
  const auto created = all<CreatePod>(r);
  ASSERT_EQ(created.size(), 1u);
  const auto& p = created[0]->object;
  EXPECT_EQ(name_of(created[0]->object), "pp-probe-0");
  EXPECT_EQ(p.at("metadata").at("labels").at(api::kLabelRole).as_string(), api::kRoleGrowProbe);
  EXPECT_EQ(p.at("metadata").at("labels").at(api::kLabelAttempt).as_string(), "1");
  EXPECT_EQ(p.at("spec").at("terminationGracePeriodSeconds").as_integer(), 0);
  EXPECT_FALSE(p.at("spec").has_field("volumes"));
  EXPECT_FALSE(p.at("spec").has_field("schedulingGroup"));
  EXPECT_EQ(p.at("spec").at("containers").at(0).at("command").at(0).as_string(), "sleep");
  EXPECT_EQ(r.status.grow_probe_time, api::format_rfc3339(kT0 + 300));
  EXPECT_EQ(r.status.phase, Phase::kRunning);
  EXPECT_EQ(r.status.attempt, 1);
}

TEST(ReconcileElastic, AProbeThatIsPlacedGrowsTheGangBackAtACheckpoint) {
  auto j = small_job();
  j.status.grow_probe_time = api::format_rfc3339(kT0 + 300);
  const Pods pods = {running_on(j, 0, 1, "n1"), running_on(j, 1, 1, "n2"), probe(j, 0, 1, "n3")};
  const auto r = reconcile(j, {}, observed(j, pods), kT0 + 305);
  const auto deleted = all<DeletePod>(r);
  ASSERT_EQ(deleted.size(), 3u);
  for (const auto* a : deleted) {
    // The ranks get their grace period to checkpoint on SIGTERM; the probe holds no work.
    EXPECT_EQ(a->force, a->name == "pp-probe-0") << a->name;
  }
  EXPECT_EQ(r.status.size, 3);
  EXPECT_EQ(r.status.attempt, 2);
  EXPECT_EQ(r.status.restarts, 0);
  EXPECT_EQ(r.status.disruptions, 0);
  EXPECT_EQ(r.status.reason, "GrowBack");
  EXPECT_FALSE(r.status.grow_probe_time);
  EXPECT_FALSE(r.status.next_grow_time);
  const auto* c = find_condition(r.status.conditions, kCondFullSize);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, "True");
}

TEST(ReconcileElastic, AProbeWithoutRoomGoesAndTheNextLookIsAnIntervalLater) {
  auto j = small_job();
  j.status.grow_probe_time = api::format_rfc3339(kT0 + 300);
  const Pods pods = {running_on(j, 0, 1, "n1"), running_on(j, 1, 1, "n2"), probe(j, 0, 1, "")};
  auto r = reconcile(j, {}, observed(j, pods), kT0 + 330);
  EXPECT_TRUE(all<DeletePod>(r).empty());  // still within the timeout
  EXPECT_EQ(r.status.grow_probe_time, api::format_rfc3339(kT0 + 300));

  r = reconcile(j, {}, observed(j, pods), kT0 + 360);
  const auto deleted = all<DeletePod>(r);
  ASSERT_EQ(deleted.size(), 1u);
  EXPECT_EQ(deleted[0]->name, "pp-probe-0");
  EXPECT_TRUE(deleted[0]->force);
  EXPECT_EQ(r.status.size, 2);
  EXPECT_EQ(r.status.attempt, 1);
  EXPECT_FALSE(r.status.grow_probe_time);
  EXPECT_EQ(r.status.next_grow_time, api::format_rfc3339(kT0 + 660));
}

TEST(ReconcileElastic, ProbesNeverOutliveTheirPurpose) {
  // Of an earlier attempt, or of a job that finished (whatever cleanPodPolicy says).
  auto j = small_job();
  const Pods old_probe = {running_on(j, 0, 1, "n1"), running_on(j, 1, 1, "n2"),
                          probe(j, 0, 0, "n3")};
  auto r = reconcile(j, {}, observed(j, old_probe), kT0 + 10);
  auto deleted = all<DeletePod>(r);
  ASSERT_EQ(deleted.size(), 1u);
  EXPECT_EQ(deleted[0]->name, "pp-probe-0");

  j.spec.run_policy.clean_pod_policy = api::CleanPodPolicy::kNone;
  j.status.phase = Phase::kSucceeded;
  const Pods done = {pod(j, 0, 1, "Succeeded", 0), pod(j, 1, 1, "Succeeded", 0),
                     probe(j, 0, 1, "n3")};
  r = reconcile(j, {}, observed(j, done), kT0 + 10);
  deleted = all<DeletePod>(r);
  ASSERT_EQ(deleted.size(), 1u);
  EXPECT_EQ(deleted[0]->name, "pp-probe-0");
}

TEST(ReconcileElastic, TheJobSucceedsWhenEveryNodeOfItsSizeDoes) {
  auto j = small_job();
  const Pods pods = {pod(j, 0, 1, "Succeeded", 0), pod(j, 1, 1, "Succeeded", 0)};
  const auto r = reconcile(j, {}, observed(j, pods), kT0 + 10);
  EXPECT_EQ(r.status.phase, Phase::kSucceeded);
  EXPECT_EQ(r.status.message, "all 2 nodes completed");
}

TEST(ReconcileElastic, MinNodesMustFitTheJob) {
  auto j = elastic_job(3, 4);
  auto errors = api::validate(j);
  ASSERT_FALSE(errors.empty());
  EXPECT_EQ(errors[0].path, "spec.elastic.minNodes");
  EXPECT_EQ(errors[0].message, "must be between 1 and spec.nnodes (3), got 4");
  j.spec.elastic = api::ElasticSpec{0, 0, 300};
  errors = api::validate(j);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[1].path, "spec.elastic.placementTimeoutSeconds");
}

TEST(ReconcileElastic, SizeAndGrowTimesSurviveTheStatusRoundTrip) {
  auto st = small_job().status;
  st.grow_probe_time = api::format_rfc3339(kT0 + 300);
  const auto back = api::status_from_json(api::status_to_json(st), nullptr);
  EXPECT_EQ(back.size, 2);
  EXPECT_EQ(back.size_since, st.size_since);
  EXPECT_EQ(back.next_grow_time, st.next_grow_time);
  EXPECT_EQ(back.grow_probe_time, st.grow_probe_time);
}

}  // namespace
}  // namespace ddp3d::op::controller
