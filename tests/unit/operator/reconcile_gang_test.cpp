// Gang placement in reconcile: one PodGroup per attempt, created before the pods that name it,
// where the cluster serves the API; the GangScheduling condition says how pods are placed,
// and a Warning event says once when they cannot be placed all together.
#include <gtest/gtest.h>

#include "job_fixtures.h"
#include "operator/api/names.h"
#include "operator/controller/conditions.h"
#include "operator/controller/reconcile.h"

namespace ddp3d::op::controller {
namespace {

using api::Phase;
using testing::all;
using testing::count;
using testing::first_index;
using testing::job;
using testing::name_of;
using testing::pod;

using testing::kT0;
constexpr const char* kApi = "scheduling.k8s.io/v1alpha2";

Observed observed(const api::TrainingJob& j, std::optional<std::string> api,
                  std::vector<ObservedPod> pods = {}) {
  Observed o;
  o.pods = std::move(pods);
  o.services.push_back({api::service_name(j.meta.name), "svc-uid"});
  o.pod_group_api = std::move(api);
  return o;
}

// The kinds of the actions that change objects, in order (events left out).
std::vector<std::string> kinds(const ReconcileResult& r) {
  std::vector<std::string> out;
  for (const auto& a : r.actions) {
    if (!std::holds_alternative<RecordEvent>(a)) out.push_back(kind_of(a));
  }
  return out;
}

TEST(ReconcileGang, EachAttemptGetsItsPodGroupBeforeItsPods) {
  auto j = job("pp", 3, 0);
  j.spec.network.rendezvous_secret = false;
  auto r = reconcile(j, {}, observed(j, kApi), kT0);
  EXPECT_EQ(kinds(r),
            (std::vector<std::string>{"CreatePodGroup", "CreatePod", "CreatePod", "CreatePod"}));
  EXPECT_EQ(target_of(r.actions[0]), "pp-gang-0");
  EXPECT_EQ(std::get<CreatePodGroup>(r.actions[0]).object.at("apiVersion").as_string(), kApi);
  for (const auto* a : all<CreatePod>(r)) {
    EXPECT_EQ(a->object.at("spec").at("schedulingGroup").at("podGroupName").as_string(),
              "pp-gang-0");
  }
  const auto* c = find_condition(r.status.conditions, kCondGangScheduling);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, "True");
  EXPECT_EQ(c->reason, "PodGroup");
  EXPECT_EQ(c->message,
            "attempt 0's 3 pods are placed all together or not at all (PodGroup pp-gang-0, "
            "scheduling.k8s.io/v1alpha2)");

  // A gang restart: attempt 1 gets a PodGroup of its own.
  j.status = r.status;
  j.status.phase = Phase::kRestarting;
  j.status.attempt = 1;
  r = reconcile(j, {}, observed(j, kApi), kT0 + 10);
  ASSERT_FALSE(r.actions.empty());
  EXPECT_EQ(target_of(r.actions[0]), "pp-gang-1");
  for (const auto* a : all<CreatePod>(r)) {
    EXPECT_EQ(a->object.at("spec").at("schedulingGroup").at("podGroupName").as_string(),
              "pp-gang-1");
  }
}

TEST(ReconcileGang, WithoutTheApiPodsArePlacedOneByOneAndTheJobSaysSoOnce) {
  auto j = job("pp", 2, 0);
  auto r = reconcile(j, {}, observed(j, std::string()), kT0);
  EXPECT_EQ(count<CreatePodGroup>(r), 0);
  for (const auto* a : all<CreatePod>(r)) {
    EXPECT_FALSE(a->object.at("spec").has_field("schedulingGroup"));
  }
  const auto* c = find_condition(r.status.conditions, kCondGangScheduling);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, "False");
  EXPECT_EQ(c->reason, "NotServed");
  EXPECT_NE(c->message.find("placement is not all-or-nothing"), std::string::npos);
  int warnings = 0;
  for (const auto* e : all<RecordEvent>(r)) warnings += e->reason == "NotServed";
  EXPECT_EQ(warnings, 1);
  // Later passes keep the condition and send no second event.
  j.status = r.status;
  r = reconcile(j, {},
                observed(j, std::string(), {pod(j, 0, 0, "Pending"), pod(j, 1, 0, "Pending")}),
                kT0 + 5);
  for (const auto* e : all<RecordEvent>(r)) EXPECT_NE(e->reason, "NotServed");
  EXPECT_EQ(find_condition(r.status.conditions, kCondGangScheduling)->reason, "NotServed");
}

TEST(ReconcileGang, RunPolicyTurnsItOff) {
  auto j = job("pp", 2, 0);
  j.spec.run_policy.gang_scheduling = false;
  const auto r = reconcile(j, {}, observed(j, kApi), kT0);
  EXPECT_EQ(count<CreatePodGroup>(r), 0);
  for (const auto* e : all<RecordEvent>(r))
    EXPECT_NE(e->reason, "Disabled") << "asked for: no warning";
  const auto* c = find_condition(r.status.conditions, kCondGangScheduling);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, "False");
  EXPECT_EQ(c->reason, "Disabled");
}

TEST(ReconcileGang, UnknownApiLeavesNoTrace) {
  auto j = job("pp", 2, 0);
  const auto r = reconcile(j, {}, observed(j, std::nullopt), kT0);
  EXPECT_EQ(find_condition(r.status.conditions, kCondGangScheduling), nullptr);
  EXPECT_EQ(count<CreatePodGroup>(r), 0);
}

}  // namespace
}  // namespace ddp3d::op::controller
