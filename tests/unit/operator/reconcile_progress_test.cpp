// reconcile() and the observed progress and startup of a gang: status.progress from the
// scrapes, progressDeadlineSeconds (gang restart naming the stalled rank), the Stuck condition
// (image pull errors, unschedulable) and startupDeadlineSeconds.
#include <gtest/gtest.h>

#include "job_fixtures.h"
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
using testing::observed_with_service;
using testing::pod;

using testing::kT0;
using testing::Pods;

std::vector<std::string> events(const ReconcileResult& r) {
  std::vector<std::string> out;
  for (const auto* e : all<RecordEvent>(r)) out.push_back(e->type + "/" + e->reason);
  return out;
}

ProgressScrape scrape(api::UnixSeconds t, double steps, std::optional<double> max = 1000) {
  ProgressScrape s;
  s.time = t;
  s.metrics.steps = steps;
  s.metrics.max_steps = max;
  s.metrics.epoch = 1;
  return s;
}

// A job of `n` nodes whose gang of `attempt` has been Running since `since`.
api::TrainingJob running_since(int n, api::UnixSeconds since, int attempt = 0) {
  auto j = job("pp", n, 8);
  j.status.phase = Phase::kRunning;
  j.status.attempt = attempt;
  j.status.start_time = api::format_rfc3339(since);
  j.status.attempt_start_time = api::format_rfc3339(since);
  set_condition(&j.status.conditions, kCondCreated, true, "Created", "",
                api::format_rfc3339(since));
  set_condition(&j.status.conditions, kCondRunning, true, "AllNodesRunning", "",
                api::format_rfc3339(since));
  return j;
}

Pods running_pods(const api::TrainingJob& j, int attempt) {
  Pods out;
  for (int r = 0; r < j.spec.nnodes; ++r) {
    out.push_back(pod(j, r, attempt, "Running"));
    out.back().node_name = "gpu-" + std::to_string(r);
  }
  return out;
}

TEST(ReconcileProgress, ScrapesBecomeStatusProgressAndPerNodeSteps) {
  auto j = running_since(2, kT0);
  Pods pods = running_pods(j, 0);
  pods[0].scrape = scrape(kT0 + 5, 300);
  pods[1].scrape = scrape(kT0 + 5, 290);
  auto r = reconcile(j, {}, observed_with_service(j, pods), kT0 + 6);
  ASSERT_TRUE(r.status.progress);
  EXPECT_EQ(r.status.progress->step, 290);
  EXPECT_EQ(r.status.progress->epoch, 1);
  EXPECT_EQ(r.status.progress->max_steps, 1000);
  EXPECT_EQ(r.status.nodes.at(0).step, 300);
  EXPECT_EQ(r.status.nodes.at(1).step, 290);
  EXPECT_EQ(r.status.nodes.at(1).message, "");
  // Ten seconds later both advanced by 100: 10 steps/s, 610 steps to go.
  j.status = r.status;
  pods[0].scrape = scrape(kT0 + 15, 400);
  pods[1].scrape = scrape(kT0 + 15, 390);
  r = reconcile(j, {}, observed_with_service(j, pods), kT0 + 16);
  EXPECT_EQ(r.status.progress->steps_per_second, 10.0);
  EXPECT_EQ(r.status.progress->eta_seconds, 61);
  EXPECT_EQ(r.status.progress->eta, "1m01s");
  EXPECT_EQ(r.status.phase, Phase::kRunning);
  EXPECT_TRUE(events(r).empty());
}

TEST(ReconcileProgress, AFailedScrapeIsShownOnItsNode) {
  auto j = running_since(2, kT0);
  Pods pods = running_pods(j, 0);
  pods[0].scrape = scrape(kT0 + 5, 300);
  pods[1].scrape = ProgressScrape{kT0 + 5, "connect: Connection refused", {}};
  const auto r = reconcile(j, {}, observed_with_service(j, pods), kT0 + 6);
  EXPECT_EQ(r.status.nodes.at(1).message, "metrics: connect: Connection refused");
  EXPECT_FALSE(r.status.nodes.at(1).step);
  EXPECT_EQ(r.status.progress->step, 300) << "the ranks that answered still count";
}

TEST(ReconcileProgress, StepsThatStopAdvancingRestartTheGangNamingTheStalledRank) {
  auto j = running_since(3, kT0);
  j.spec.run_policy.progress_deadline_seconds = 60;
  Pods pods = running_pods(j, 0);
  for (auto& p : pods) p.scrape = scrape(kT0 + 10, 500);
  pods[2].scrape = scrape(kT0 + 10, 480);
  auto r = reconcile(j, {}, observed_with_service(j, pods), kT0 + 11);
  ASSERT_EQ(r.status.phase, Phase::kRunning);
  EXPECT_EQ(r.requeue_after_seconds, 59) << "due again when the deadline passes";
  j.status = r.status;
  // Just before the deadline (measured from the last advance, at kT0+10): nothing.
  r = reconcile(j, {}, observed_with_service(j, pods), kT0 + 69);
  EXPECT_EQ(r.status.phase, Phase::kRunning);
  EXPECT_EQ(r.requeue_after_seconds, 1);
  r = reconcile(j, {}, observed_with_service(j, pods), kT0 + 70);
  EXPECT_EQ(r.status.phase, Phase::kRestarting);
  EXPECT_EQ(r.status.reason, "ProgressDeadlineExceeded");
  EXPECT_EQ(r.status.restarts, 1) << "a stall counts against backoffLimit";
  EXPECT_EQ(r.status.disruptions, 0);
  EXPECT_EQ(r.status.attempt, 1);
  EXPECT_EQ(count<DeletePod>(r), 3);
  EXPECT_EQ(events(r), std::vector<std::string>{"Warning/ProgressDeadlineExceeded"});
  ASSERT_TRUE(r.status.last_stall);
  EXPECT_EQ(r.status.last_stall->rank, 2);
  EXPECT_EQ(r.status.last_stall->pod, "pp-node-2");
  EXPECT_EQ(r.status.last_stall->node, "gpu-2");
  EXPECT_EQ(r.status.last_stall->step, 480);
  EXPECT_EQ(r.status.last_stall->attempt, 0);
  EXPECT_EQ(r.status.last_stall->time, api::format_rfc3339(kT0 + 70));
  EXPECT_NE(r.status.message.find("rank 2 (pod pp-node-2 on node gpu-2)"), std::string::npos)
      << r.status.message;
  EXPECT_EQ(r.status.nodes.at(2).reason, "Stalled");
}

TEST(ReconcileProgress, WithoutAnySampleTheDeadlineCountsFromAllRunning) {
  auto j = running_since(2, kT0);
  j.spec.run_policy.progress_deadline_seconds = 30;
  Pods pods = running_pods(j, 0);
  pods[1].scrape = ProgressScrape{kT0 + 1, "HTTP 404", {}};
  EXPECT_EQ(reconcile(j, {}, observed_with_service(j, pods), kT0 + 29).status.phase,
            Phase::kRunning);
  const auto r = reconcile(j, {}, observed_with_service(j, pods), kT0 + 30);
  EXPECT_EQ(r.status.reason, "ProgressDeadlineExceeded");
  EXPECT_EQ(r.status.last_stall->rank, 0) << "rank 0 was never scraped: blamed before rank 1";
  EXPECT_NE(r.status.last_stall->message.find("its metrics not scraped yet"), std::string::npos);
}

TEST(ReconcileProgress, ProgressOfAnEarlierAttemptDoesNotStartTheClock) {
  // Progress last advanced in attempt 0 long ago; attempt 1 has been Running for 10 s.
  auto j = running_since(2, kT0 + 1000, 1);
  j.spec.run_policy.progress_deadline_seconds = 60;
  api::TrainingProgress old;
  old.attempt = 0;
  old.step = 700;
  old.last_progress_time = api::format_rfc3339(kT0);
  j.status.progress = old;
  const auto r = reconcile(j, {}, observed_with_service(j, running_pods(j, 1)), kT0 + 1010);
  EXPECT_EQ(r.status.phase, Phase::kRunning);
  EXPECT_EQ(r.requeue_after_seconds, 50);
}

TEST(ReconcileProgress, AStallPastBackoffLimitFailsTheJobWithTheStallEvent) {
  auto j = running_since(2, kT0);
  j.spec.run_policy.progress_deadline_seconds = 30;
  j.spec.run_policy.backoff_limit = 1;
  j.status.restarts = 1;
  const auto r = reconcile(j, {}, observed_with_service(j, running_pods(j, 0)), kT0 + 31);
  EXPECT_EQ(r.status.phase, Phase::kFailed);
  EXPECT_EQ(r.status.reason, "BackoffLimitExceeded");
  EXPECT_EQ(events(r), (std::vector<std::string>{"Warning/ProgressDeadlineExceeded",
                                                 "Warning/BackoffLimitExceeded"}));
  EXPECT_TRUE(r.status.last_stall);
}

TEST(ReconcileProgress, NoDeadlineNoRestart) {
  auto j = running_since(2, kT0);
  const auto r = reconcile(j, {}, observed_with_service(j, running_pods(j, 0)), kT0 + 100000);
  EXPECT_EQ(r.status.phase, Phase::kRunning);
  EXPECT_FALSE(r.status.last_stall);
}

// --- pods stuck before running, startupDeadlineSeconds ------------------------------------
api::TrainingJob starting_at(int n, api::UnixSeconds t) {
  auto j = job("pp", n, 8);
  j.status.phase = Phase::kStarting;
  j.status.start_time = api::format_rfc3339(t);
  j.status.attempt_start_time = api::format_rfc3339(t);
  return j;
}

Pods one_pulling(const api::TrainingJob& j) {
  Pods pods = running_pods(j, 0);
  pods[1].phase = "Pending";
  pods[1].waiting_reason = "ImagePullBackOff";
  pods[1].waiting_message = "container worker: Back-off pulling image \"ddp3d/worker:nope\"";
  return pods;
}

TEST(ReconcileStuck, AnImagePullErrorSetsTheStuckConditionNamingThePod) {
  auto j = starting_at(2, kT0);
  const auto r = reconcile(j, {}, observed_with_service(j, one_pulling(j)), kT0 + 5);
  const auto* c = find_condition(r.status.conditions, kCondStuck);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, "True");
  EXPECT_EQ(c->reason, "ImagePullBackOff");
  EXPECT_EQ(c->message,
            "pod pp-node-1 (rank 1): ImagePullBackOff: container worker: Back-off pulling image "
            "\"ddp3d/worker:nope\"");
  EXPECT_EQ(r.status.nodes.at(1).reason, "ImagePullBackOff");
  EXPECT_NE(r.status.nodes.at(1).message.find("Back-off pulling"), std::string::npos);
  EXPECT_EQ(events(r), std::vector<std::string>{"Warning/ImagePullBackOff"});
  // Still stuck on the next pass: no second event.
  j.status = r.status;
  EXPECT_TRUE(events(reconcile(j, {}, observed_with_service(j, one_pulling(j)), kT0 + 6)).empty());
  // Resolved: False, and the job runs.
  const auto ok = reconcile(j, {}, observed_with_service(j, running_pods(j, 0)), kT0 + 7);
  EXPECT_EQ(find_condition(ok.status.conditions, kCondStuck)->status, "False");
  EXPECT_EQ(ok.status.phase, Phase::kRunning);
}

TEST(ReconcileStuck, UnschedulableCarriesTheSchedulersMessage) {
  auto j = starting_at(2, kT0);
  Pods pods = running_pods(j, 0);
  pods[0].phase = "Pending";
  pods[0].unschedulable_reason = "Unschedulable";
  pods[0].unschedulable_message = "0/4 nodes are available: 4 Insufficient nvidia.com/gpu.";
  const auto r = reconcile(j, {}, observed_with_service(j, pods), kT0 + 5);
  const auto* c = find_condition(r.status.conditions, kCondStuck);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->reason, "Unschedulable");
  EXPECT_EQ(c->message,
            "pod pp-node-0 (rank 0): Unschedulable: 0/4 nodes are available: 4 Insufficient "
            "nvidia.com/gpu.");
}

TEST(ReconcileStuck, NoStuckConditionUntilAPodIsStuck) {
  auto j = starting_at(2, kT0);
  Pods pods = running_pods(j, 0);
  pods[0].phase = "Pending";
  pods[0].waiting_reason = "";  // ContainerCreating is not observed as a waiting reason
  const auto r = reconcile(j, {}, observed_with_service(j, pods), kT0 + 5);
  EXPECT_FALSE(find_condition(r.status.conditions, kCondStuck));
}

TEST(ReconcileStartup, PastTheStartupDeadlineTheJobFailsNamingWhyAndDeletesItsPods) {
  auto j = starting_at(3, kT0);
  j.spec.run_policy.startup_deadline_seconds = 120;
  Pods pods = one_pulling(j);
  pods.pop_back();  // rank 2 has no pod
  auto r = reconcile(j, {}, observed_with_service(j, pods), kT0 + 119);
  EXPECT_EQ(r.status.phase, Phase::kStarting);
  EXPECT_EQ(r.requeue_after_seconds, 1);
  r = reconcile(j, {}, observed_with_service(j, pods), kT0 + 120);
  EXPECT_EQ(r.status.phase, Phase::kFailed);
  EXPECT_EQ(r.status.reason, "StartupDeadlineExceeded");
  EXPECT_EQ(r.status.message,
            "1 of 3 nodes running 120s after attempt 0 started, past startupDeadlineSeconds=120; "
            "pod pp-node-1 (rank 1): ImagePullBackOff: container worker: Back-off pulling image "
            "\"ddp3d/worker:nope\"; rank 2 has no pod");
  EXPECT_EQ(count<DeletePod>(r), 2) << "a partial gang must not hold GPUs";
  EXPECT_EQ(count<CreatePod>(r), 0);
  EXPECT_EQ(events(r), std::vector<std::string>{"Warning/StartupDeadlineExceeded"});
  // Later passes keep deleting whatever is left, whatever cleanPodPolicy says.
  j.status = r.status;
  j.spec.run_policy.clean_pod_policy = api::CleanPodPolicy::kNone;
  const auto again = reconcile(j, {}, observed_with_service(j, pods), kT0 + 200);
  EXPECT_EQ(count<DeletePod>(again), 2);
}

TEST(ReconcileStartup, TheClockIsPerAttemptAndStopsOnceAllRan) {
  auto j = starting_at(2, kT0);
  j.spec.run_policy.startup_deadline_seconds = 60;
  auto r = reconcile(j, {}, observed_with_service(j, running_pods(j, 0)), kT0 + 30);
  EXPECT_EQ(r.status.phase, Phase::kRunning);
  // Running, then a rank fails: the gang restarts and attempt 1's clock starts only when its
  // first pod is created.
  j.status = r.status;
  Pods pods = running_pods(j, 0);
  pods[0].phase = "Failed";
  pods[0].exit_code = 137;
  r = reconcile(j, {}, observed_with_service(j, pods), kT0 + 500);
  EXPECT_EQ(r.status.attempt, 1);
  EXPECT_FALSE(r.status.attempt_start_time);
  j.status = r.status;
  r = reconcile(j, {}, observed_with_service(j, {}), kT0 + 600);
  EXPECT_EQ(count<CreatePod>(r), 2);
  EXPECT_EQ(r.status.attempt_start_time, api::format_rfc3339(kT0 + 600));
  j.status = r.status;
  Pods pending = running_pods(j, 1);
  for (auto& p : pending) p.phase = "Pending";
  EXPECT_EQ(reconcile(j, {}, observed_with_service(j, pending), kT0 + 659).status.phase,
            Phase::kRestarting);
  EXPECT_EQ(reconcile(j, {}, observed_with_service(j, pending), kT0 + 660).status.reason,
            "StartupDeadlineExceeded");
}

}  // namespace
}  // namespace ddp3d::op::controller
