// Node loss in reconcile: a pod whose node has not been Ready for
// runPolicy.nodeLossTimeoutSeconds (or whose Node is gone) restarts the gang as a disruption,
// and the job's pods on that node are force-deleted, so a pod stuck Terminating there never
// holds up the next attempt; an attempt's pods are created only once every name is free.
#include <gtest/gtest.h>

#include "job_fixtures.h"
#include "operator/api/names.h"
#include "operator/controller/node_loss.h"
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
using testing::Pods;

std::string node_of(int rank) {
  return "worker-" + std::to_string(rank);
}

// Pods of `attempt`, rank r on node worker-r.
Pods placed_pods(const api::TrainingJob& j, int attempt, const std::string& phase) {
  Pods out;
  for (int r = 0; r < j.spec.nnodes; ++r) {
    out.push_back(pod(j, r, attempt, phase));
    out.back().node_name = node_of(r);
  }
  return out;
}

ObservedNode ready_node(const std::string& name) {
  return {name, "True", "KubeletReady", kT0 - 3600};
}

// The pods, the Service, and a Ready Node for every pod; `down` marks one node not Ready.
Observed observed(const api::TrainingJob& j, Pods pods) {
  Observed o = testing::observed_with_service(j, std::move(pods));
  o.nodes_watched = true;
  for (const auto& p : o.pods) {
    if (!p.node_name.empty()) o.nodes[p.node_name] = ready_node(p.node_name);
  }
  return o;
}

void set_down(Observed* o, const std::string& node, const std::string& ready,
              api::UnixSeconds since) {
  o->nodes[node] = {node, ready, ready == "Unknown" ? "NodeStatusUnknown" : "KubeletNotReady",
                    since};
}

// A 4-node job whose attempt-0 pods were all observed Running (uids recorded).
api::TrainingJob running_job() {
  auto j = job("pp", 4, 8);
  j.status.phase = Phase::kStarting;
  j.status.start_time = api::format_rfc3339(kT0 - 100);
  const auto r = reconcile(j, {}, observed(j, placed_pods(j, 0, "Running")), kT0 - 99);
  EXPECT_EQ(r.status.phase, Phase::kRunning);
  j.status = r.status;
  return j;
}

std::vector<std::string> events(const ReconcileResult& r) {
  std::vector<std::string> out;
  for (const auto* e : all<RecordEvent>(r)) out.push_back(e->type + "/" + e->reason);
  return out;
}

// "name" for a graceful delete, "name!" for a forced one.
std::vector<std::string> deletes(const ReconcileResult& r) {
  std::vector<std::string> out;
  for (const auto* a : all<DeletePod>(r)) out.push_back(a->name + (a->force ? "!" : ""));
  return out;
}

int creates(const ReconcileResult& r) {
  return count<CreatePod>(r);
}

TEST(AssessNode, ReadyOrUnreportedNodesAreNotLost) {
  const ObservedNode ready = ready_node("a");
  EXPECT_FALSE(assess_node("a", &ready, 30, kT0).lost);
  const ObservedNode fresh{"a", "", "", std::nullopt};
  const auto v = assess_node("a", &fresh, 30, kT0);
  EXPECT_FALSE(v.lost);
  EXPECT_FALSE(v.recheck_in);
}

TEST(AssessNode, NotReadyCountsFromTheTransitionAndAsksForARecheck) {
  const ObservedNode down{"a", "Unknown", "NodeStatusUnknown", kT0 - 10};
  auto v = assess_node("a", &down, 30, kT0);
  EXPECT_FALSE(v.lost);
  EXPECT_EQ(v.recheck_in, 20);
  v = assess_node("a", &down, 30, kT0 + 20);
  EXPECT_TRUE(v.lost);
  EXPECT_EQ(v.why,
            "node a has been Ready=Unknown (NodeStatusUnknown) for 30s, past "
            "runPolicy.nodeLossTimeoutSeconds=30");
  // A transition time in the future (clock skew) counts as none yet, not as a negative time.
  const ObservedNode skewed{"a", "False", "", kT0 + 100};
  v = assess_node("a", &skewed, 30, kT0);
  EXPECT_FALSE(v.lost);
  EXPECT_EQ(v.recheck_in, 30);
  EXPECT_TRUE(assess_node("a", &skewed, 0, kT0).lost) << "timeout 0: lost as soon as seen";
}

TEST(AssessNode, ADeletedNodeIsLostAtOnceAnUnknownOneNever) {
  ObservedNode gone{"gone", "True", "KubeletReady", kT0 - 60};
  gone.deleted = true;
  const auto v = assess_node("gone", &gone, 3600, kT0);
  EXPECT_TRUE(v.lost);
  EXPECT_EQ(v.why, "node gone was deleted");
  // Not in the informer's cache yet (a node that just joined): nothing is known, nothing lost.
  EXPECT_FALSE(assess_node("new", nullptr, 0, kT0).lost);
  EXPECT_FALSE(assess_node("new", nullptr, 0, kT0).recheck_in);
}

TEST(ReconcileNodeLoss, StatusNamesEachRanksNode) {
  const auto j = running_job();
  for (int r = 0; r < 4; ++r) EXPECT_EQ(j.status.nodes[r].node, node_of(r));
}

TEST(ReconcileNodeLoss, ANodeNotReadyWithinTheTimeoutOnlyAsksForARecheck) {
  const auto j = running_job();
  Observed o = observed(j, placed_pods(j, 0, "Running"));
  set_down(&o, node_of(2), "Unknown", kT0 - 5);
  const auto r = reconcile(j, {}, o, kT0);
  EXPECT_TRUE(r.actions.empty());
  EXPECT_EQ(r.status.phase, Phase::kRunning);
  ASSERT_TRUE(r.requeue_after_seconds);
  EXPECT_EQ(*r.requeue_after_seconds, 25);
}

TEST(ReconcileNodeLoss, ALostNodeRestartsTheGangAndForceDeletesItsPod) {
  for (const std::string ready : {"Unknown", "False"}) {
    SCOPED_TRACE(ready);
    const auto j = running_job();
    Observed o = observed(j, placed_pods(j, 0, "Running"));
    set_down(&o, node_of(2), ready, kT0 - 30);
    const auto r = reconcile(j, {}, o, kT0);
    EXPECT_EQ(r.status.phase, Phase::kRestarting);
    EXPECT_EQ(r.status.reason, kReasonNodeLost);
    EXPECT_EQ(r.status.disruptions, 1);
    EXPECT_EQ(r.status.restarts, 0) << "not counted against backoffLimit";
    EXPECT_EQ(r.status.attempt, 1);
    EXPECT_NE(r.status.message.find("node 2 (pod pp-node-2) was lost: node worker-2 has been "
                                    "Ready=" +
                                    ready),
              std::string::npos)
        << r.status.message;
    EXPECT_NE(r.status.message.find("past runPolicy.nodeLossTimeoutSeconds=30"), std::string::npos);
    EXPECT_EQ(r.status.nodes[2].reason, kReasonNodeLost);
    // The survivors stop gracefully (SIGTERM: checkpoint at the iteration); the lost node's pod
    // is removed at once, for no kubelet will ever confirm it.
    EXPECT_EQ(deletes(r),
              (std::vector<std::string>{"pp-node-0", "pp-node-1", "pp-node-2!", "pp-node-3"}));
    EXPECT_EQ(events(r), (std::vector<std::string>{"Warning/ForceDeletedPod", "Warning/NodeLost"}));
    EXPECT_EQ(creates(r), 0);
  }
}

TEST(ReconcileNodeLoss, APodStuckTerminatingOnALostNodeIsForcedAndThenTheGangStarts) {
  // The ranks noticed first (exit 200, peer lost): the gang restarted as a disruption and the
  // operator's graceful delete left rank 2's pod Terminating on its dead node.
  auto j = running_job();
  j.status.phase = Phase::kRestarting;
  j.status.attempt = 1;
  j.status.disruptions = 1;
  for (auto& n : j.status.nodes) n.uid.clear();
  Pods pods = placed_pods(j, 0, "Running");
  for (auto& p : pods) p.deleting = true;
  pods = {pods[2]};  // the others have gone
  Observed o = observed(j, pods);
  set_down(&o, node_of(2), "Unknown", kT0 - 10);

  auto r = reconcile(j, {}, o, kT0);
  EXPECT_EQ(creates(r), 0) << "no part of attempt 1 waits on nodes for the rest";
  EXPECT_TRUE(deletes(r).empty()) << "the node is not lost yet";
  EXPECT_EQ(r.status.nodes[2].message,
            "waiting for pod pp-node-2 of attempt 0 to terminate on node worker-2");
  EXPECT_EQ(r.status.phase, Phase::kRestarting);
  EXPECT_EQ(r.requeue_after_seconds, 20);

  j.status = r.status;
  r = reconcile(j, {}, o, kT0 + 20);
  EXPECT_EQ(deletes(r), std::vector<std::string>{"pp-node-2!"});
  EXPECT_EQ(events(r), std::vector<std::string>{"Warning/ForceDeletedPod"});
  EXPECT_EQ(creates(r), 0) << "the name is free once the informer shows the pod gone";
  EXPECT_EQ(r.status.disruptions, 1) << "the same restart, not a new one";

  j.status = r.status;
  r = reconcile(j, {}, observed(j, {}), kT0 + 21);
  EXPECT_EQ(creates(r), 4);
  EXPECT_EQ(r.status.attempt, 1);
}

TEST(ReconcileNodeLoss, ADeletedNodeIsLostAtOnce) {
  const auto j = running_job();
  Observed o = observed(j, placed_pods(j, 0, "Running"));
  o.nodes[node_of(1)].deleted = true;
  auto r = reconcile(j, {}, o, kT0);
  EXPECT_EQ(r.status.reason, kReasonNodeLost);
  EXPECT_NE(r.status.message.find("node worker-1 was deleted"), std::string::npos);
  EXPECT_EQ(deletes(r),
            (std::vector<std::string>{"pp-node-0", "pp-node-1!", "pp-node-2", "pp-node-3"}));
  // A node the informer has not delivered yet is no reason to restart anything.
  o = observed(j, placed_pods(j, 0, "Running"));
  o.nodes.erase(node_of(1));
  r = reconcile(j, {}, o, kT0);
  EXPECT_TRUE(r.actions.empty());
  EXPECT_EQ(r.status.phase, Phase::kRunning);
}

TEST(ReconcileNodeLoss, WithoutTheNodeWatchNoNodeIsEverLost) {
  const auto j = running_job();
  Observed o = observed(j, placed_pods(j, 0, "Running"));
  o.nodes_watched = false;
  o.nodes.clear();
  const auto r = reconcile(j, {}, o, kT0 + 3600);
  EXPECT_TRUE(r.actions.empty());
  EXPECT_EQ(r.status.phase, Phase::kRunning);
}

TEST(ReconcileNodeLoss, FinishedPodsOnALostNodeAreLeftAsTheyEnded) {
  // Rank 3 succeeded before its node died; the others still run. Its pod is not a disruption
  // (it finished), and cleanPodPolicy Running never deletes it.
  const auto j = running_job();
  Pods pods = placed_pods(j, 0, "Running");
  pods[3].phase = "Succeeded";
  pods[3].exit_code = 0;
  Observed o = observed(j, pods);
  set_down(&o, node_of(3), "Unknown", kT0 - 300);
  const auto r = reconcile(j, {}, o, kT0);
  EXPECT_TRUE(deletes(r).empty());
  EXPECT_EQ(r.status.phase, Phase::kRunning);
}

}  // namespace
}  // namespace ddp3d::op::controller
