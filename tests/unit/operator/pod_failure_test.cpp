// Telling disruptions and collateral exits from failures: the pod observation, the
// classification, and the runPolicy.disruptionLimit / status.disruptions fields.
#include "operator/controller/pod_failure.h"

#include <gtest/gtest.h>

#include "job_fixtures.h"
#include "operator/api/training_job.h"
#include "operator/api/validation.h"

namespace ddp3d::op::controller {
namespace {

using testing::parse;

TEST(ObservePod, ReadsTheDisruptionTargetCondition) {
  const auto p = observe_pod(parse(R"({
    "metadata": {"name": "pp-node-0", "deletionTimestamp": "2026-01-01T00:00:00Z"},
    "status": {"phase": "Running", "conditions": [
      {"type": "Ready", "status": "True"},
      {"type": "DisruptionTarget", "status": "True", "reason": "EvictionByEvictionAPI"}]}})"));
  EXPECT_EQ(p.disruption_target, "EvictionByEvictionAPI");
  EXPECT_EQ(disruption_of(p), "deleted by Kubernetes (EvictionByEvictionAPI)");
  // A condition that is not True is no disruption; the pod reason is kept apart from the
  // container's.
  const auto q = observe_pod(parse(R"({"metadata": {"name": "x"},
    "status": {"phase": "Failed", "reason": "Evicted", "conditions": [
      {"type": "DisruptionTarget", "status": "False", "reason": "EvictionByEvictionAPI"}],
      "containerStatuses": [{"state": {"terminated": {"exitCode": 137, "reason": "Error"}}}]}})"));
  EXPECT_EQ(q.disruption_target, "");
  EXPECT_EQ(q.pod_reason, "Evicted");
  EXPECT_EQ(q.reason, "Error");
  EXPECT_EQ(disruption_of(q), "stopped by its node (Evicted)");
}

ObservedPod pod(const std::string& phase, std::optional<int> code = std::nullopt) {
  ObservedPod p;
  p.name = "pp-node-0";
  p.phase = phase;
  p.exit_code = code;
  return p;
}

TEST(DisruptionOf, OnlyWhatTheProgramDidNotCause) {
  EXPECT_EQ(disruption_of(pod("Running")), "");
  EXPECT_EQ(disruption_of(pod("Failed", 1)), "");
  EXPECT_EQ(disruption_of(pod("Failed", 137)), "") << "an OOM kill is the job's failure";
  // Checkpointed on SIGTERM (its own or a peer's): preempted, resumable; not a failure.
  EXPECT_EQ(disruption_of(pod("Failed", 201)),
            "stopped after a checkpoint on SIGTERM (exit code 201)");
  EXPECT_EQ(disruption_of(pod("Failed", 143)), "") << "killed by SIGTERM without a checkpoint";
  EXPECT_EQ(disruption_of(pod("Unknown")), "lost with its node (phase Unknown)");
  auto deleted = pod("Running");
  deleted.deleting = true;
  EXPECT_EQ(disruption_of(deleted), "deleted from outside the operator");
  auto pending_deleted = pod("Pending");
  pending_deleted.deleting = true;
  EXPECT_EQ(disruption_of(pending_deleted), "deleted from outside the operator");
  auto failed_then_deleted = pod("Failed", 1);
  failed_then_deleted.deleting = true;
  EXPECT_EQ(disruption_of(failed_then_deleted), "");
  auto done = pod("Succeeded", 0);
  done.deleting = true;
  done.disruption_target = "DeletionByTaintManager";
  EXPECT_EQ(disruption_of(done), "");
  for (const char* reason : {"NodeLost", "Shutdown", "NodeShutdown", "Terminated"}) {
    auto p = pod("Failed");
    p.pod_reason = reason;
    EXPECT_EQ(disruption_of(p), std::string("stopped by its node (") + reason + ")");
  }
}

TEST(BlamedFailure, PrefersTheRankThatDidNotLoseAPeerThenTheEarliest) {
  auto a = pod("Failed", 200);
  a.rank = 0;
  a.finished_at = 10;
  auto b = pod("Failed", 1);
  b.rank = 1;
  b.finished_at = 12;
  auto c = pod("Failed", 137);
  c.rank = 2;
  c.finished_at = 11;
  auto d = pod("Failed", 143);
  d.rank = 3;  // no finish time
  EXPECT_EQ(blamed_failure({&a, &b, &c, &d}), &c);
  EXPECT_EQ(blamed_failure({&a, &b}), &b);
  EXPECT_EQ(blamed_failure({&a, &d}), &d);
  EXPECT_EQ(blamed_failure({&d, &a}), &d);
  auto e = pod("Failed", 200);
  e.rank = 4;
  e.finished_at = 9;
  EXPECT_EQ(blamed_failure({&a, &e}), &e);
  EXPECT_TRUE(is_peer_lost(a));
  EXPECT_FALSE(is_peer_lost(b));
  EXPECT_FALSE(is_peer_lost(pod("Failed")));
}

TEST(DisruptionLimit, DefaultRoundTripAndBounds) {
  auto j = testing::job("pp", 2, 8);
  EXPECT_EQ(j.spec.run_policy.disruption_limit, 10);
  auto v = testing::job_json("pp", 2, 8);
  v["spec"]["runPolicy"] = parse(R"({"disruptionLimit": 3})");
  auto parsed = api::parse_training_job(v);
  ASSERT_TRUE(parsed.errors.empty()) << api::join(parsed.errors);
  EXPECT_EQ(parsed.job.spec.run_policy.disruption_limit, 3);
  EXPECT_TRUE(api::validate(parsed.job).empty());
  for (int bad : {-1, api::kMaxDisruptionLimit + 1}) {
    parsed.job.spec.run_policy.disruption_limit = bad;
    const auto errors = api::validate(parsed.job);
    ASSERT_EQ(errors.size(), 1u) << bad;
    EXPECT_EQ(errors[0].path, "spec.runPolicy.disruptionLimit");
    EXPECT_NE(errors[0].message.find("between 0 and 1000"), std::string::npos);
  }
  v["spec"]["runPolicy"] = parse(R"({"disruptionLimit": "many"})");
  parsed = api::parse_training_job(v);
  ASSERT_EQ(parsed.errors.size(), 1u);
  EXPECT_EQ(parsed.errors[0].path, "spec.runPolicy.disruptionLimit");

  api::TrainingJobStatus st;
  st.disruptions = 4;
  st.nodes.push_back({0, "pp-node-0", "Running", std::nullopt, "", "uid-0", "", std::nullopt});
  std::vector<api::FieldError> errors;
  const auto back = api::status_from_json(api::status_to_json(st), &errors);
  EXPECT_TRUE(errors.empty());
  EXPECT_EQ(back.disruptions, 4);
  ASSERT_EQ(back.nodes.size(), 1u);
  EXPECT_EQ(back.nodes[0].uid, "uid-0");
}

}  // namespace
}  // namespace ddp3d::op::controller
