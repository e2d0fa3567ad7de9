// Condition bookkeeping (controller/conditions.h) and the Running condition's life through
// reconcile: Unknown before the first run, then True or False for good (docs/crd.md).
#include "operator/controller/conditions.h"

#include <gtest/gtest.h>

#include "job_fixtures.h"
#include "operator/controller/reconcile.h"

namespace ddp3d::op::controller {
namespace {

using api::Phase;
using testing::gang_pods;
using testing::job;
using testing::kT0;
using testing::observed_with_service;
using testing::pod;
using testing::Pods;

// Reconciles `j` and stores the result as its status, as the status subresource would.
ReconcileResult step(api::TrainingJob* j, const Pods& pods, api::UnixSeconds now) {
  auto r = reconcile(*j, {}, observed_with_service(*j, pods), now);
  j->status = r.status;
  return r;
}

const api::Condition& running(const ReconcileResult& r) {
  const auto* c = find_condition(r.status.conditions, kCondRunning);
  EXPECT_NE(c, nullptr);
  static const api::Condition kNone;
  return c ? *c : kNone;
}

TEST(Conditions, UnknownIsListedAndItsTransitionsMoveTheTime) {
  std::vector<api::Condition> conds;
  set_unknown(&conds, "Running", "Pending", "waiting", "t1");
  ASSERT_EQ(conds.size(), 1u);
  EXPECT_EQ(conds[0].status, "Unknown");
  EXPECT_EQ(conds[0].last_transition_time, "t1");
  // Still Unknown with a new reason: the time stays.
  set_unknown(&conds, "Running", "NodesStarting", "1 of 2", "t2");
  EXPECT_EQ(conds[0].reason, "NodesStarting");
  EXPECT_EQ(conds[0].last_transition_time, "t1");
  // Unknown -> True is a transition.
  set_condition(&conds, "Running", true, "AllNodesRunning", "", "t3");
  EXPECT_EQ(conds[0].status, "True");
  EXPECT_EQ(conds[0].last_transition_time, "t3");
  // A reason is required: an empty one becomes Unspecified.
  set_unknown(&conds, "Other", "", "", "t4");
  EXPECT_EQ(find_condition(conds, "Other")->reason, kReasonUnspecified);
}

TEST(Conditions, AFalseOfAConditionListedUnknownIsKept) {
  // set_condition adds no False for what never happened, but one listed Unknown turns False.
  std::vector<api::Condition> conds;
  set_condition(&conds, "Restarting", false, "R", "", "t1");
  EXPECT_TRUE(conds.empty());
  set_unknown(&conds, "Running", "Pending", "", "t1");
  set_condition(&conds, "Running", false, "Suspended", "", "t2");
  ASSERT_EQ(conds.size(), 1u);
  EXPECT_EQ(conds[0].status, "False");
  EXPECT_EQ(conds[0].last_transition_time, "t2");
}

TEST(ReconcileConditions, RunningIsUnknownFromTheFirstPassUntilEveryPodRuns) {
  auto j = job("pp", 2, 0);
  j.meta.generation = 3;
  const auto created = step(&j, {}, kT0);
  ASSERT_EQ(created.status.phase, Phase::kPending);
  EXPECT_EQ(running(created).status, "Unknown");
  EXPECT_EQ(running(created).reason, "Created");
  EXPECT_EQ(running(created).observed_generation, 3);
  EXPECT_EQ(running(created).last_transition_time, api::format_rfc3339(kT0));
  // Outcomes and events not yet happened stay absent.
  for (const char* type : {kCondSucceeded, kCondFailed, kCondRestarting, kCondSuspended}) {
    EXPECT_EQ(find_condition(created.status.conditions, type), nullptr) << type;
  }

  Pods starting = gang_pods(j, 0, "Running");
  starting[1].phase = "Pending";
  const auto half = step(&j, starting, kT0 + 10);
  ASSERT_EQ(half.status.phase, Phase::kStarting);
  EXPECT_EQ(running(half).status, "Unknown");
  EXPECT_EQ(running(half).reason, "NodesStarting");
  EXPECT_EQ(running(half).last_transition_time, api::format_rfc3339(kT0)) << "no transition";

  const auto all = step(&j, gang_pods(j, 0, "Running"), kT0 + 20);
  ASSERT_EQ(all.status.phase, Phase::kRunning);
  EXPECT_EQ(running(all).status, "True");
  EXPECT_EQ(running(all).reason, "AllNodesRunning");
  EXPECT_EQ(running(all).last_transition_time, api::format_rfc3339(kT0 + 20));

  // Through the status subresource's JSON an Unknown condition reads back unchanged.
  std::vector<api::FieldError> errors;
  EXPECT_EQ(api::status_from_json(api::status_to_json(half.status), &errors), half.status);
  EXPECT_TRUE(errors.empty());
}

TEST(ReconcileConditions, AfterARunARestartIsFalseNotUnknown) {
  auto j = job("pp", 2, 0);
  step(&j, {}, kT0);
  step(&j, gang_pods(j, 0, "Running"), kT0 + 10);
  Pods failed = gang_pods(j, 0, "Running");
  failed[1].phase = "Failed";
  failed[1].exit_code = 137;
  const auto restart = step(&j, failed, kT0 + 20);
  ASSERT_EQ(restart.status.phase, Phase::kRestarting);
  EXPECT_EQ(running(restart).status, "False");
  EXPECT_EQ(running(restart).reason, "NodeFailed");
  EXPECT_EQ(running(restart).last_transition_time, api::format_rfc3339(kT0 + 20));
  // The next attempt's pods starting: still False, not Unknown.
  const auto again = step(&j, gang_pods(j, 1, "Pending"), kT0 + 30);
  EXPECT_EQ(running(again).status, "False");
  EXPECT_EQ(running(again).last_transition_time, api::format_rfc3339(kT0 + 20));
  const auto back = step(&j, gang_pods(j, 1, "Running"), kT0 + 40);
  ASSERT_EQ(back.status.phase, Phase::kRunning);
  EXPECT_EQ(running(back).status, "True");
  EXPECT_EQ(running(back).last_transition_time, api::format_rfc3339(kT0 + 40));
}

TEST(ReconcileConditions, ARestartBeforeAnyRunKeepsItUnknown) {
  auto j = job("pp", 2, 0);
  step(&j, {}, kT0);
  Pods failed = gang_pods(j, 0, "Pending");
  failed[1].phase = "Failed";
  failed[1].exit_code = 137;
  const auto restart = step(&j, failed, kT0 + 10);
  ASSERT_EQ(restart.status.phase, Phase::kRestarting);
  EXPECT_EQ(running(restart).status, "Unknown");
  EXPECT_EQ(running(restart).reason, "NodeFailed");
  EXPECT_EQ(running(restart).last_transition_time, api::format_rfc3339(kT0));
}

TEST(ReconcileConditions, AJobStoppedBeforeItRanSaysRunningFalse) {
  // Suspended from the start: known not to run.
  auto s = job("pp", 2, 0);
  s.spec.run_policy.suspend = true;
  const auto suspended = step(&s, {}, kT0);
  ASSERT_EQ(suspended.status.phase, Phase::kSuspended);
  EXPECT_EQ(running(suspended).status, "False");
  EXPECT_EQ(running(suspended).reason, "Suspended");
  // Resumed: Running stays False (known), with the phase's reason, until it runs.
  s.spec.run_policy.suspend = false;
  const auto resumed = step(&s, {}, kT0 + 10);
  ASSERT_EQ(resumed.status.phase, Phase::kPending);
  EXPECT_EQ(running(resumed).status, "False");
  EXPECT_EQ(running(resumed).reason, "Resumed");

  // Failed on its first pass (an invalid spec): False with the failure's reason.
  auto bad = job("pp", 2, 0);
  bad.spec.network.metrics_namespaces = {"Not_A_Namespace"};
  const auto failed = step(&bad, {}, kT0);
  ASSERT_EQ(failed.status.phase, Phase::kFailed);
  EXPECT_EQ(running(failed).status, "False");
  EXPECT_EQ(running(failed).reason, "InvalidSpec");

  // Failed while starting: Unknown -> False is a transition.
  auto j = job("pp", 2, 0);
  j.spec.run_policy.restart_policy = api::RestartPolicy::kNever;
  step(&j, {}, kT0);
  Pods p = gang_pods(j, 0, "Pending");
  p[0].phase = "Failed";
  p[0].exit_code = 1;
  const auto never = step(&j, p, kT0 + 10);
  ASSERT_EQ(never.status.phase, Phase::kFailed);
  EXPECT_EQ(running(never).status, "False");
  EXPECT_EQ(running(never).last_transition_time, api::format_rfc3339(kT0 + 10));
}

}  // namespace
}  // namespace ddp3d::op::controller
