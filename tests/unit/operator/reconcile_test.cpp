#include "operator/controller/reconcile.h"

#include <gtest/gtest.h>

#include <functional>

#include "job_fixtures.h"
#include "operator/api/names.h"
#include "operator/controller/conditions.h"

namespace ddp3d::op::controller {
namespace {

using api::Phase;
using testing::all;
using testing::count;
using testing::first_index;
using testing::gang_pods;
using testing::job;
using testing::name_of;
using testing::pod;

using testing::kT0;
using testing::Pods;

Observed observed(const api::TrainingJob& j, Pods pods, bool service = true) {
  Observed o;
  o.pods = std::move(pods);
  if (service) o.services.push_back({api::service_name(j.meta.name), "svc-uid"});
  return o;
}

std::vector<std::string> events(const ReconcileResult& r) {
  std::vector<std::string> out;
  for (const auto* e : all<RecordEvent>(r)) out.push_back(e->type + "/" + e->reason);
  return out;
}

// Status of a job already started at kT0 with the given phase.
api::TrainingJob in_phase(api::TrainingJob j, Phase phase, int attempt = 0, int restarts = 0) {
  j.status.phase = phase;
  j.status.attempt = attempt;
  j.status.restarts = restarts;
  j.status.start_time = api::format_rfc3339(kT0);
  return j;
}

struct Case {
  std::string name;
  std::function<api::TrainingJob()> make_job;
  std::function<Pods(const api::TrainingJob&)> pods;
  Phase want_phase;
  std::string want_reason;
  int want_pod_creates = 0;
  int want_pod_deletes = 0;
  std::vector<std::string> want_events;
  int want_attempt = 0;
  int want_restarts = 0;
};

api::TrainingJob with_policy(api::RestartPolicy p, int backoff = 3) {
  auto j = job("pp", 4, 8);
  j.spec.run_policy.restart_policy = p;
  j.spec.run_policy.backoff_limit = backoff;
  return j;
}

// One failed pod (rank 1) among running ones, in attempt `attempt`.
Pods one_failed(const api::TrainingJob& j, int attempt, std::optional<int> code) {
  Pods p = gang_pods(j, attempt, "Running");
  p[1].phase = "Failed";
  p[1].exit_code = code;
  return p;
}

// Under ExitCode, a permanent code waits for the rest of the group to settle: a rank that was
// killed (137) makes its peers exit 1, and their status may arrive first.
TEST(Reconcile, ExitCodeVerdictWaitsForTheGroupToSettle) {
  const auto j = in_phase(with_policy(api::RestartPolicy::kExitCode), Phase::kRunning);
  Pods p = one_failed(j, 0, 1);  // rank 1 exited 1 at T0+100 ...
  p[1].finished_at = kT0 + 100;
  // ... while the others still show Running: no verdict during the grace period.
  ReconcileResult r = reconcile(j, {}, observed(j, p), kT0 + 103);
  EXPECT_EQ(r.status.phase, Phase::kRunning);
  EXPECT_TRUE(events(r).empty());
  EXPECT_EQ(count<DeletePod>(r), 0);
  ASSERT_TRUE(r.requeue_after_seconds.has_value());
  EXPECT_EQ(*r.requeue_after_seconds, kExitCodeVerdictGraceSeconds - 3);

  // The killed rank's status arrives: the group's failure is retryable, so all restart.
  p[0].phase = "Failed";
  p[0].exit_code = 137;
  p[0].finished_at = kT0 + 100;
  r = reconcile(j, {}, observed(j, p), kT0 + 104);
  EXPECT_EQ(r.status.phase, Phase::kRestarting);
  EXPECT_EQ(r.status.restarts, 1);

  // Had the others kept running through the grace period, the code is permanent.
  Pods q = one_failed(j, 0, 1);
  q[1].finished_at = kT0 + 100;
  r = reconcile(j, {}, observed(j, q), kT0 + 100 + kExitCodeVerdictGraceSeconds);
  EXPECT_EQ(r.status.phase, Phase::kFailed);
  EXPECT_EQ(r.status.reason, "PermanentExitCode");
  // So is one whose whole group has settled, at once.
  Pods all = gang_pods(j, 0, "Failed");
  for (auto& pod : all) {
    pod.exit_code = 2;
    pod.finished_at = kT0 + 100;
  }
  r = reconcile(j, {}, observed(j, all), kT0 + 101);
  EXPECT_EQ(r.status.phase, Phase::kFailed);
}

TEST(Reconcile, PhaseTransitionTable) {
  const std::vector<Case> cases = {
      {"new job creates every pod",
       [] { return job("pp", 4, 8); },
       [](const auto&) { return Pods{}; },
       Phase::kPending,
       "Created",
       4,
       0,
       {"Normal/Created"}},
      {"pods pending -> Starting",
       [] { return in_phase(job("pp", 4, 8), Phase::kPending); },
       [](const auto& j) { return gang_pods(j, 0, "Pending"); },
       Phase::kStarting,
       "NodesStarting",
       0,
       0,
       {"Normal/NodesStarting"}},
      {"some running stays Starting",
       [] { return in_phase(job("pp", 4, 8), Phase::kStarting); },
       [](const auto& j) {
         auto p = gang_pods(j, 0, "Running");
         p[3].phase = "Pending";
         return p;
       },
       Phase::kStarting,
       "NodesStarting",
       0,
       0,
       {}},
      {"all running -> Running",
       [] { return in_phase(job("pp", 4, 8), Phase::kStarting); },
       [](const auto& j) { return gang_pods(j, 0, "Running"); },
       Phase::kRunning,
       "AllNodesRunning",
       0,
       0,
       {"Normal/AllNodesRunning"}},
      {"a missing pod is recreated",
       [] { return in_phase(job("pp", 4, 8), Phase::kStarting); },
       [](const auto& j) {
         auto p = gang_pods(j, 0, "Running");
         p.pop_back();
         return p;
       },
       Phase::kStarting,
       "NodesStarting",
       1,
       0,
       {}},
      {"retryable failure -> Restarting, gang deleted",
       [] { return in_phase(with_policy(api::RestartPolicy::kOnFailure), Phase::kRunning); },
       [](const auto& j) { return one_failed(j, 0, 1); },
       Phase::kRestarting,
       "NodeFailed",
       0,
       4,
       {"Warning/NodeFailed"},
       1,
       1},
      {"old attempt still terminating: wait",
       [] { return in_phase(job("pp", 4, 8), Phase::kRestarting, 1, 1); },
       [](const auto& j) {
         auto p = gang_pods(j, 0, "Running");
         for (auto& x : p) x.deleting = true;
         return p;
       },
       Phase::kRestarting,
       "",
       0,
       0,
       {},
       1,
       1},
      {"old attempt not yet deleted: delete it, wait",
       [] { return in_phase(job("pp", 4, 8), Phase::kRestarting, 1, 1); },
       [](const auto& j) { return gang_pods(j, 0, "Running"); },
       Phase::kRestarting,
       "",
       0,
       4,
       {},
       1,
       1},
      {"old attempt gone: recreate with attempt+1",
       [] { return in_phase(job("pp", 4, 8), Phase::kRestarting, 1, 1); },
       [](const auto&) { return Pods{}; },
       Phase::kRestarting,
       "",
       4,
       0,
       {},
       1,
       1},
      {"new attempt running -> Running",
       [] { return in_phase(job("pp", 4, 8), Phase::kRestarting, 1, 1); },
       [](const auto& j) { return gang_pods(j, 1, "Running"); },
       Phase::kRunning,
       "AllNodesRunning",
       0,
       0,
       {"Normal/AllNodesRunning"},
       1,
       1},
      {"second failure counts a second restart",
       [] { return in_phase(with_policy(api::RestartPolicy::kOnFailure), Phase::kRunning, 1, 1); },
       [](const auto& j) { return one_failed(j, 1, 137); },
       Phase::kRestarting,
       "NodeFailed",
       0,
       4,
       {"Warning/NodeFailed"},
       2,
       2},
      {"past backoffLimit -> Failed",
       [] {
         return in_phase(with_policy(api::RestartPolicy::kOnFailure, 2), Phase::kRunning, 2, 2);
       },
       [](const auto& j) { return one_failed(j, 2, 137); },
       Phase::kFailed,
       "BackoffLimitExceeded",
       0,
       3,
       {"Warning/BackoffLimitExceeded"},
       2,
       2},
      {"backoffLimit 0 fails on first failure",
       [] { return in_phase(with_policy(api::RestartPolicy::kOnFailure, 0), Phase::kRunning); },
       [](const auto& j) { return one_failed(j, 0, 137); },
       Phase::kFailed,
       "BackoffLimitExceeded",
       0,
       3,
       {"Warning/BackoffLimitExceeded"}},
      {"ExitCode: 1-127 permanent",
       [] { return in_phase(with_policy(api::RestartPolicy::kExitCode), Phase::kRunning); },
       [](const auto& j) { return one_failed(j, 0, 127); },
       Phase::kFailed,
       "PermanentExitCode",
       0,
       3,
       {"Warning/PermanentExitCode"}},
      {"ExitCode: exit 1 permanent",
       [] { return in_phase(with_policy(api::RestartPolicy::kExitCode), Phase::kRunning); },
       [](const auto& j) { return one_failed(j, 0, 1); },
       Phase::kFailed,
       "PermanentExitCode",
       0,
       3,
       {"Warning/PermanentExitCode"}},
      {"ExitCode: >=128 retryable",
       [] { return in_phase(with_policy(api::RestartPolicy::kExitCode), Phase::kRunning); },
       [](const auto& j) { return one_failed(j, 0, 128); },
       Phase::kRestarting,
       "NodeFailed",
       0,
       4,
       {"Warning/NodeFailed"},
       1,
       1},
      {"ExitCode: a killed rank's peer exiting 1 does not make it permanent",
       [] { return in_phase(with_policy(api::RestartPolicy::kExitCode), Phase::kRunning); },
       [](const auto& j) {
         auto p = one_failed(j, 0, 137);
         p[0].phase = "Failed";
         p[0].exit_code = 1;
         return p;
       },
       Phase::kRestarting,
       "NodeFailed",
       0,
       4,
       {"Warning/NodeFailed"},
       1,
       1},
      {"ExitCode: no code (evicted) retryable",
       [] { return in_phase(with_policy(api::RestartPolicy::kExitCode), Phase::kRunning); },
       [](const auto& j) { return one_failed(j, 0, std::nullopt); },
       Phase::kRestarting,
       "NodeFailed",
       0,
       4,
       {"Warning/NodeFailed"},
       1,
       1},
      {"Never: first failure is final",
       [] { return in_phase(with_policy(api::RestartPolicy::kNever), Phase::kRunning); },
       [](const auto& j) { return one_failed(j, 0, 137); },
       Phase::kFailed,
       "NodeFailed",
       0,
       3,
       {"Warning/NodeFailed"}},
      {"all succeeded -> Succeeded",
       [] { return in_phase(job("pp", 4, 8), Phase::kRunning); },
       [](const auto& j) { return gang_pods(j, 0, "Succeeded"); },
       Phase::kSucceeded,
       "AllNodesSucceeded",
       0,
       0,
       {"Normal/AllNodesSucceeded"}},
      {"some succeeded, rest running -> Running",
       [] { return in_phase(job("pp", 4, 8), Phase::kRunning); },
       [](const auto& j) {
         auto p = gang_pods(j, 0, "Running");
         p[0].phase = "Succeeded";
         return p;
       },
       Phase::kRunning,
       "AllNodesRunning",
       0,
       0,
       {}},
      {"suspend deletes pods -> Suspended",
       [] {
         auto j = in_phase(job("pp", 4, 8), Phase::kRunning);
         j.spec.run_policy.suspend = true;
         return j;
       },
       [](const auto& j) { return gang_pods(j, 0, "Running"); },
       Phase::kSuspended,
       "Suspended",
       0,
       4,
       {"Normal/Suspended"}},
      {"resume starts a fresh attempt",
       [] { return in_phase(job("pp", 4, 8), Phase::kSuspended); },
       [](const auto&) { return Pods{}; },
       Phase::kPending,
       "Resumed",
       4,
       0,
       {"Normal/Resumed"},
       1,
       0},
      {"created suspended: no pods",
       [] {
         auto j = job("pp", 4, 8);
         j.spec.run_policy.suspend = true;
         return j;
       },
       [](const auto&) { return Pods{}; },
       Phase::kSuspended,
       "Suspended",
       0,
       0,
       {"Normal/Suspended"}},
      {"reserved env -> Failed InvalidSpec",
       [] {
         auto j = job("pp", 4, 8);
         j.spec.env.push_back(web::json::value::parse(R"({"name": "MASTER_ADDR", "value": "x"})"));
         return j;
       },
       [](const auto&) { return Pods{}; },
       Phase::kFailed,
       "InvalidSpec",
       0,
       0,
       {"Warning/InvalidSpec"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const auto j = c.make_job();
    const auto r = reconcile(j, {}, observed(j, c.pods(j)), kT0 + 10);
    EXPECT_EQ(r.status.phase, c.want_phase) << api::to_string(r.status.phase);
    if (!c.want_reason.empty()) {
      EXPECT_EQ(r.status.reason, c.want_reason) << r.status.message;
    }
    EXPECT_EQ(count<CreatePod>(r), c.want_pod_creates);
    EXPECT_EQ(count<DeletePod>(r), c.want_pod_deletes);
    EXPECT_EQ(events(r), c.want_events);
    EXPECT_EQ(r.status.attempt, c.want_attempt);
    EXPECT_EQ(r.status.restarts, c.want_restarts);
    EXPECT_EQ(count<CreateService>(r), 0);
    EXPECT_EQ(count<DeleteJob>(r), 0);
    std::vector<api::FieldError> errors;
    EXPECT_EQ(api::status_from_json(api::status_to_json(r.status), &errors), r.status);
  }
}

TEST(Reconcile, ConditionsAreMetav1ConditionsOfTheGenerationRead) {
  auto j = job("pp", 2, 0);
  j.meta.generation = 7;
  const auto r = reconcile(j, {}, observed(j, {}, false), kT0);
  ASSERT_FALSE(r.status.conditions.empty());
  for (const auto& c : r.status.conditions) {
    EXPECT_EQ(c.observed_generation, 7) << c.type;
    EXPECT_FALSE(c.reason.empty()) << c.type;
  }
  const auto json = api::status_to_json(r.status);
  const auto& first = json.at("conditions").at(0);
  EXPECT_EQ(first.at("observedGeneration").as_integer(), 7);
  EXPECT_TRUE(first.has_string_field("reason"));
  EXPECT_TRUE(first.has_string_field("message"));
  // A message past metav1's limit is cut, at a character boundary.
  std::vector<api::Condition> conds;
  set_condition(&conds, "Running", true, "R", std::string(40000, 'x') + "\u00e9", "t");
  EXPECT_LE(conds[0].message.size(), 32768u);
  EXPECT_NE(conds[0].message.find("(cut)"), std::string::npos);
  // A phase entered without a reason still gets one.
  auto restarting = j;
  restarting.status.phase = Phase::kRestarting;
  restarting.status.reason.clear();
  for (const auto& c : reconcile(restarting, {}, observed(j, {}), kT0).status.conditions) {
    EXPECT_FALSE(c.reason.empty()) << c.type;
  }
}

TEST(Reconcile, FirstPassCreatesServiceAndPodsOfAttemptZero) {
  const auto j = job("pp", 2, 8);
  const auto r = reconcile(j, {}, observed(j, {}, false), kT0);
  ASSERT_EQ(count<CreateService>(r), 1);
  EXPECT_EQ(target_of(r.actions[0]), "pp");
  std::vector<std::string> pods;
  for (const auto* a : all<CreatePod>(r)) {
    pods.push_back(name_of(a->object));
    EXPECT_EQ(a->object.at("metadata").at("labels").at("ddp3d.io/attempt").as_string(), "0");
  }
  EXPECT_EQ(pods, (std::vector<std::string>{"pp-node-0", "pp-node-1"}));
  EXPECT_EQ(r.status.start_time, api::format_rfc3339(kT0));
  EXPECT_EQ(r.status.observed_generation, 1);
  ASSERT_EQ(r.status.nodes.size(), 2u);
  EXPECT_EQ(r.status.nodes[1].pod, "pp-node-1");
  EXPECT_EQ(r.status.nodes[1].phase, "Pending");
  ASSERT_NE(find_condition(r.status.conditions, kCondCreated), nullptr);
}

// --- spec.network (docs/security.md, "Network") ---------------------------------------------

TEST(ReconcileNetwork, EachAttemptsSecretComesOnceBeforeItsFirstPod) {
  auto j = in_phase(with_policy(api::RestartPolicy::kOnFailure), Phase::kRunning);
  const auto first = reconcile(j, {}, observed(j, {}), kT0);
  ASSERT_EQ(count<CreateRendezvousSecret>(first), 1);
  EXPECT_LT(first_index<CreateRendezvousSecret>(first), first_index<CreatePod>(first));
  EXPECT_EQ(target_of(first.actions[first_index<CreateRendezvousSecret>(first)]),
            "pp-rendezvous-0");
  // Nothing to create, no Secret either.
  EXPECT_EQ(count<CreateRendezvousSecret>(
                reconcile(j, {}, observed(j, gang_pods(j, 0, "Running")), kT0 + 5)),
            0);
  // A gang restart: the next attempt's pods get the next attempt's Secret.
  auto failed = reconcile(j, {}, observed(j, one_failed(j, 0, 137)), kT0 + 10);
  j.status = failed.status;
  const auto recreate = reconcile(j, {}, observed(j, {}), kT0 + 20);
  ASSERT_EQ(count<CreateRendezvousSecret>(recreate), 1);
  EXPECT_EQ(target_of(recreate.actions[first_index<CreateRendezvousSecret>(recreate)]),
            "pp-rendezvous-1");
}

TEST(ReconcileNetwork, NoSecretWhenTheJobTurnsItOff) {
  auto j = job("pp", 2, 0);
  j.spec.network.rendezvous_secret = false;
  EXPECT_EQ(count<CreateRendezvousSecret>(reconcile(j, {}, observed(j, {}), kT0)), 0);
}

TEST(ReconcileNetwork, ThePolicyIsCreatedUntilSeenAndOnlyWhenAskedFor) {
  auto j = job("pp", 2, 0);
  EXPECT_EQ(count<CreateNetworkPolicy>(reconcile(j, {}, observed(j, {}), kT0)), 0);
  j.spec.network.policy = true;
  auto o = observed(j, {});
  o.operator_namespace = "ddp3d-system";
  const auto r = reconcile(j, {}, o, kT0);
  ASSERT_EQ(count<CreateNetworkPolicy>(r), 1);
  const auto& a = *all<CreateNetworkPolicy>(r)[0];
  EXPECT_EQ(name_of(a.object), "pp-ranks");
  EXPECT_EQ(a.object.at("spec")
                .at("ingress")
                .at(1)
                .at("from")
                .at(0)
                .at("namespaceSelector")
                .at("matchLabels")
                .at("kubernetes.io/metadata.name")
                .as_string(),
            "ddp3d-system");
  o.network_policies.push_back({"pp-ranks", "np-uid"});
  EXPECT_EQ(count<CreateNetworkPolicy>(reconcile(j, {}, o, kT0 + 1)), 0);
}

TEST(ReconcileNetwork, BadMetricsNamespacesFailTheJobNamingTheItem) {
  auto j = job("pp", 2, 0);
  j.spec.network.metrics_namespaces = {"monitoring", "Not_A_Namespace"};
  const auto r = reconcile(j, {}, observed(j, {}), kT0);
  EXPECT_EQ(r.status.phase, Phase::kFailed);
  EXPECT_NE(r.status.message.find("spec.network.metricsNamespaces[1]: must be a namespace name"),
            std::string::npos)
      << r.status.message;
}

TEST(Reconcile, SteadyStateIsIdempotent) {
  // Replaying a reconcile (operator restart, duplicate event) must not create anything.
  auto j = in_phase(job("pp", 4, 8), Phase::kStarting);
  const auto first = reconcile(j, {}, observed(j, gang_pods(j, 0, "Running")), kT0 + 5);
  // Through JSON, as the status subresource stores it: a reread status must not differ, or
  // the operator would write status forever.
  std::vector<api::FieldError> errors;
  j.status = api::status_from_json(api::status_to_json(first.status), &errors);
  EXPECT_EQ(j.status, first.status);
  const auto second = reconcile(j, {}, observed(j, gang_pods(j, 0, "Running")), kT0 + 50);
  EXPECT_TRUE(second.actions.empty());
  EXPECT_EQ(second.status, first.status);  // lastTransitionTime untouched
  const auto* running = find_condition(second.status.conditions, kCondRunning);
  ASSERT_NE(running, nullptr);
  EXPECT_EQ(running->last_transition_time, api::format_rfc3339(kT0 + 5));
}

TEST(Reconcile, RestartRecreatesEveryPodWithNextAttempt) {
  auto j = in_phase(with_policy(api::RestartPolicy::kOnFailure), Phase::kRunning);
  auto failed = reconcile(j, {}, observed(j, one_failed(j, 0, 137)), kT0 + 10);
  ASSERT_EQ(failed.status.phase, Phase::kRestarting);
  EXPECT_NE(failed.status.message.find("node 1 (pod pp-node-1) failed with exit code 137"),
            std::string::npos)
      << failed.status.message;
  // The per-node status keeps the failure visible.
  EXPECT_EQ(failed.status.nodes[1].exit_code, 137);
  const auto* restarting = find_condition(failed.status.conditions, kCondRestarting);
  ASSERT_NE(restarting, nullptr);
  EXPECT_EQ(restarting->status, "True");
  // Deletes carry the uid so a recreated pod of the same name is never hit.
  for (const auto* a : all<DeletePod>(failed)) EXPECT_EQ(a->uid, a->name + "-a0");
  j.status = failed.status;
  const auto recreate = reconcile(j, {}, observed(j, {}), kT0 + 20);
  int n = 0;
  for (const auto* a : all<CreatePod>(recreate)) {
    ++n;
    EXPECT_EQ(a->object.at("metadata").at("labels").at("ddp3d.io/attempt").as_string(), "1");
    bool saw_attempt = false;
    for (const auto& e : a->object.at("spec").at("containers").at(0).at("env").as_array()) {
      if (e.at("name").as_string() == "DDP3D_ATTEMPT") {
        EXPECT_EQ(e.at("value").as_string(), "1");
        saw_attempt = true;
      }
    }
    EXPECT_TRUE(saw_attempt);
  }
  EXPECT_EQ(n, 4);
  j.status = recreate.status;
  const auto running = reconcile(j, {}, observed(j, gang_pods(j, 1, "Running")), kT0 + 30);
  EXPECT_EQ(running.status.phase, Phase::kRunning);
  EXPECT_EQ(find_condition(running.status.conditions, kCondRestarting)->status, "False");
  EXPECT_EQ(running.status.restarts, 1);
}

TEST(Reconcile, CleanPodPolicyAfterFinish) {
  struct P {
    api::CleanPodPolicy policy;
    int want_deletes;
  };
  // Rank 0 failed permanently; ranks 1-3 still run, and one pod of rank 3 already succeeded.
  for (const auto& [policy, want] :
       {P{api::CleanPodPolicy::kNone, 0}, P{api::CleanPodPolicy::kRunning, 2},
        P{api::CleanPodPolicy::kAll, 4}}) {
    auto j = in_phase(with_policy(api::RestartPolicy::kExitCode), Phase::kRunning);
    j.spec.run_policy.clean_pod_policy = policy;
    auto pods = one_failed(j, 0, 2);
    pods[3].phase = "Succeeded";
    const auto r = reconcile(j, {}, observed(j, pods), kT0 + 10);
    EXPECT_EQ(r.status.phase, Phase::kFailed);
    EXPECT_EQ(count<DeletePod>(r), want) << api::to_string(policy);
    EXPECT_EQ(r.status.completion_time, api::format_rfc3339(kT0 + 10));
  }
}

TEST(Reconcile, FinishedJobKeepsApplyingCleanPodPolicyButNothingElse) {
  auto j = in_phase(job("pp", 2, 8), Phase::kSucceeded);
  j.status.completion_time = api::format_rfc3339(kT0);
  j.spec.run_policy.clean_pod_policy = api::CleanPodPolicy::kAll;
  const auto r = reconcile(j, {}, observed(j, gang_pods(j, 0, "Succeeded"), false), kT0 + 1);
  EXPECT_EQ(count<DeletePod>(r), 2);
  EXPECT_EQ(count<CreatePod>(r), 0);
  EXPECT_EQ(count<CreateService>(r), 0);
  EXPECT_EQ(r.status.phase, Phase::kSucceeded);
}

TEST(Reconcile, TtlDeletesTheJobWhenDue) {
  auto j = in_phase(job("pp", 2, 8), Phase::kSucceeded);
  j.status.completion_time = api::format_rfc3339(kT0);
  j.spec.run_policy.ttl_seconds_after_finished = 60;
  const auto early = reconcile(j, {}, observed(j, {}), kT0 + 45);
  EXPECT_EQ(count<DeleteJob>(early), 0);
  EXPECT_EQ(early.requeue_after_seconds, 15);
  const auto due = reconcile(j, {}, observed(j, {}), kT0 + 60);
  ASSERT_EQ(count<DeleteJob>(due), 1);
  EXPECT_EQ(std::get<DeleteJob>(due.actions.back()).uid, "uid-1");
}

TEST(Reconcile, TtlZeroDeletesOnTheFinishingPass) {
  auto j = in_phase(job("pp", 2, 8), Phase::kRunning);
  j.spec.run_policy.ttl_seconds_after_finished = 0;
  const auto r = reconcile(j, {}, observed(j, gang_pods(j, 0, "Succeeded")), kT0 + 5);
  EXPECT_EQ(r.status.phase, Phase::kSucceeded);
  EXPECT_EQ(count<DeleteJob>(r), 1);
}

TEST(Reconcile, ActiveDeadline) {
  auto j = in_phase(job("pp", 2, 8), Phase::kRunning);
  j.spec.run_policy.active_deadline_seconds = 100;
  j.spec.run_policy.clean_pod_policy = api::CleanPodPolicy::kNone;
  const auto before = reconcile(j, {}, observed(j, gang_pods(j, 0, "Running")), kT0 + 40);
  EXPECT_EQ(before.status.phase, Phase::kRunning);
  EXPECT_EQ(before.requeue_after_seconds, 60);
  const auto after = reconcile(j, {}, observed(j, gang_pods(j, 0, "Running")), kT0 + 100);
  EXPECT_EQ(after.status.phase, Phase::kFailed);
  EXPECT_EQ(after.status.reason, "DeadlineExceeded");
  // The pods stop even under cleanPodPolicy None: a failed job must release its GPUs.
  EXPECT_EQ(count<DeletePod>(after), 2);
}

TEST(Reconcile, SuspendClearsStartTimeAndResumeUsesFreshAttempt) {
  auto j = in_phase(job("pp", 2, 8), Phase::kRunning);
  j.spec.run_policy.suspend = true;
  const auto s = reconcile(j, {}, observed(j, gang_pods(j, 0, "Running")), kT0 + 10);
  EXPECT_EQ(s.status.phase, Phase::kSuspended);
  EXPECT_FALSE(s.status.start_time);
  EXPECT_EQ(find_condition(s.status.conditions, kCondSuspended)->status, "True");
  j.status = s.status;
  j.spec.run_policy.suspend = false;
  // Old pods still terminating: they block their names; nothing is created yet.
  auto terminating = gang_pods(j, 0, "Running");
  for (auto& p : terminating) p.deleting = true;
  const auto resumed = reconcile(j, {}, observed(j, terminating), kT0 + 20);
  EXPECT_EQ(resumed.status.phase, Phase::kPending);
  EXPECT_EQ(resumed.status.attempt, 1);
  EXPECT_EQ(count<CreatePod>(resumed), 0);
  EXPECT_EQ(find_condition(resumed.status.conditions, kCondSuspended)->status, "False");
  j.status = resumed.status;
  const auto created = reconcile(j, {}, observed(j, {}), kT0 + 30);
  EXPECT_EQ(count<CreatePod>(created), 2);
  EXPECT_EQ(created.status.start_time, api::format_rfc3339(kT0 + 30));
}

TEST(Reconcile, StalePodsOfOtherAttemptsOrRanksAreDeleted) {
  auto j = in_phase(job("pp", 2, 8), Phase::kRunning, 2, 2);
  Pods pods = gang_pods(j, 2, "Running");
  pods.push_back(pod(j, 5, 2, "Running"));  // rank beyond nnodes (spec shrank)
  const auto r = reconcile(j, {}, observed(j, pods), kT0);
  ASSERT_EQ(count<DeletePod>(r), 1);
  EXPECT_EQ(target_of(r.actions[0]), "pp-node-5");
  EXPECT_EQ(r.status.phase, Phase::kRunning);
}

TEST(Reconcile, DeletingJobDoesNothing) {
  auto j = job("pp", 2, 8);
  j.meta.deleting = true;
  EXPECT_TRUE(reconcile(j, {}, observed(j, {}, false), kT0).actions.empty());
}

TEST(Reconcile, InvalidSpecMessageNamesTheField) {
  auto j = job("pp", 2, 8);
  j.spec.env.push_back(web::json::value::parse(R"({"name": "NODE_RANK", "value": "7"})"));
  const auto r = reconcile(j, {}, observed(j, {}, false), kT0);
  EXPECT_EQ(r.status.phase, Phase::kFailed);
  EXPECT_NE(r.status.message.find("spec.env[0].name: \"NODE_RANK\" is reserved"), std::string::npos)
      << r.status.message;
  EXPECT_EQ(count<CreatePod>(r), 0);
  EXPECT_EQ(count<CreateService>(r), 0);
  // Parse errors fail the job the same way.
  const auto p = reconcile(job("pp", 2, 8), {{"spec.nnodes", "must be an integer"}},
                           observed(j, {}, false), kT0);
  EXPECT_EQ(p.status.phase, Phase::kFailed);
  EXPECT_NE(p.status.message.find("spec.nnodes: must be an integer"), std::string::npos);
}

TEST(Reconcile, LongNameJobCreatesValidNames) {
  const std::string name(200, 'l');
  const auto j = job(name, 3, 0);
  const auto r = reconcile(j, {}, observed(j, {}, false), kT0);
  for (const auto* a : all<CreatePod>(r)) {
    EXPECT_TRUE(api::is_dns1123_label(name_of(a->object))) << name_of(a->object);
  }
  for (const auto* a : all<CreateService>(r)) {
    EXPECT_TRUE(api::is_dns1035_label(name_of(a->object))) << name_of(a->object);
  }
  EXPECT_EQ(count<CreatePod>(r), 3);
}

// --- level-triggered cleanup ------------------------------------------------
// Each pass sees what exists and the status the previous pass wrote; a delete that failed
// (the API refused it, the operator crashed) leaves the pod there, and the next pass must
// issue the delete again, until the pod is gone.

std::vector<std::string> deleted_pods(const ReconcileResult& r) {
  std::vector<std::string> out;
  for (const auto* a : all<DeletePod>(r)) out.push_back(a->name);
  return out;
}

TEST(Reconcile, DeadlineKillIsReissuedUntilThePodsAreGone) {
  auto j = in_phase(job("pp", 2, 8), Phase::kRunning);
  j.spec.run_policy.active_deadline_seconds = 100;
  j.spec.run_policy.clean_pod_policy = api::CleanPodPolicy::kNone;
  const Pods running = gang_pods(j, 0, "Running");
  // Pass 1: past the deadline, the job fails and both pods are to go.
  auto r = reconcile(j, {}, observed(j, running), kT0 + 100);
  ASSERT_EQ(r.status.phase, Phase::kFailed);
  ASSERT_EQ(r.status.reason, "DeadlineExceeded");
  EXPECT_EQ(deleted_pods(r), (std::vector<std::string>{"pp-node-0", "pp-node-1"}));
  // Both deletes failed: pass 2 reads the stored (Failed) status and sees the same pods.
  std::vector<api::FieldError> errors;
  j.status = api::status_from_json(api::status_to_json(r.status), &errors);
  r = reconcile(j, {}, observed(j, running), kT0 + 101);
  EXPECT_EQ(r.status.phase, Phase::kFailed);
  EXPECT_EQ(deleted_pods(r), (std::vector<std::string>{"pp-node-0", "pp-node-1"}));
  EXPECT_TRUE(events(r).empty()) << "the failure is reported once";
  // Pass 3: rank 0's delete went through (terminating), rank 1's failed again.
  Pods partly = running;
  partly[0].deleting = true;
  r = reconcile(j, {}, observed(j, partly), kT0 + 102);
  EXPECT_EQ(deleted_pods(r), (std::vector<std::string>{"pp-node-1"}));
  // Once they are gone, nothing more is asked.
  r = reconcile(j, {}, observed(j, {}), kT0 + 103);
  EXPECT_TRUE(r.actions.empty());
  EXPECT_EQ(r.status, j.status);
}

TEST(Reconcile, CleanPodPolicyAndTtlAreReissuedOnEveryPass) {
  auto j = in_phase(with_policy(api::RestartPolicy::kExitCode), Phase::kRunning);
  j.spec.run_policy.clean_pod_policy = api::CleanPodPolicy::kRunning;
  j.spec.run_policy.ttl_seconds_after_finished = 5;
  Pods pods = one_failed(j, 0, 2);  // rank 1 failed permanently, ranks 0, 2, 3 still run
  pods[1].finished_at = kT0;
  for (auto& p : pods) p.finished_at = kT0;
  auto r = reconcile(j, {}, observed(j, pods), kT0 + kExitCodeVerdictGraceSeconds);
  ASSERT_EQ(r.status.phase, Phase::kFailed);
  EXPECT_EQ(deleted_pods(r).size(), 3u);
  // Every delete failed; the next passes ask again, then delete the job when the TTL is due.
  j.status = r.status;
  for (int pass = 1; pass <= 3; ++pass) {
    SCOPED_TRACE(pass);
    r = reconcile(j, {}, observed(j, pods), kT0 + kExitCodeVerdictGraceSeconds + pass);
    EXPECT_EQ(deleted_pods(r).size(), 3u);
    EXPECT_EQ(count<DeleteJob>(r), 0);
  }
  r = reconcile(j, {}, observed(j, pods), kT0 + kExitCodeVerdictGraceSeconds + 5);
  EXPECT_EQ(count<DeleteJob>(r), 1);
  // The DeleteJob failed too: asked again on the next pass.
  r = reconcile(j, {}, observed(j, {pods[1]}), kT0 + kExitCodeVerdictGraceSeconds + 6);
  EXPECT_EQ(count<DeleteJob>(r), 1);
  EXPECT_TRUE(deleted_pods(r).empty()) << "the failed pod is kept under cleanPodPolicy Running";
}

// --- disruptions ------------------------------------------------------------

// The status of a job whose 4 pods of `attempt` were all observed Running (uids recorded).
api::TrainingJob running_job(int attempt = 0, int restarts = 0) {
  auto j =
      in_phase(with_policy(api::RestartPolicy::kExitCode), Phase::kStarting, attempt, restarts);
  const auto r = reconcile(j, {}, observed(j, gang_pods(j, attempt, "Running")), kT0 + 1);
  EXPECT_EQ(r.status.phase, Phase::kRunning);
  j.status = r.status;
  return j;
}

void expect_disruption_restart(const ReconcileResult& r, int want_deletes) {
  EXPECT_EQ(r.status.phase, Phase::kRestarting) << r.status.message;
  EXPECT_EQ(r.status.reason, "NodeDisrupted");
  EXPECT_EQ(r.status.attempt, 1);
  EXPECT_EQ(r.status.restarts, 0) << "disruptions do not count against backoffLimit";
  EXPECT_EQ(r.status.disruptions, 1);
  EXPECT_EQ(count<DeletePod>(r), want_deletes);
  EXPECT_EQ(count<CreatePod>(r), 0) << "never a lone recreate";
  EXPECT_EQ(events(r), (std::vector<std::string>{"Warning/NodeDisrupted"}));
  EXPECT_NE(r.status.message.find("disruption 1 of 10"), std::string::npos) << r.status.message;
}

TEST(Reconcile, PodDeletedFromOutsideRestartsTheGang) {
  const auto j = running_job();
  Pods pods = gang_pods(j, 0, "Running");
  pods[2].deleting = true;  // kubectl delete / drain: terminating, still there
  const auto r = reconcile(j, {}, observed(j, pods), kT0 + 10);
  expect_disruption_restart(r, 3);
  EXPECT_NE(r.status.message.find("node 2 (pod pp-node-2) was deleted from outside"),
            std::string::npos)
      << r.status.message;
  EXPECT_EQ(r.status.nodes[2].reason, "Disrupted");
  for (const auto& n : r.status.nodes) EXPECT_TRUE(n.uid.empty()) << "uids of the old attempt";
}

TEST(Reconcile, PodThatVanishedRestartsTheGang) {
  const auto j = running_job();
  Pods pods = gang_pods(j, 0, "Running");
  pods.erase(pods.begin() + 1);  // deleted and already removed (never scheduled, or forced)
  const auto r = reconcile(j, {}, observed(j, pods), kT0 + 10);
  expect_disruption_restart(r, 3);
  EXPECT_EQ(r.status.nodes[1].phase, "Deleted");
  // The next passes create attempt 1 once every name is free: while the old pods of ranks 0,
  // 2 and 3 terminate, no pod of attempt 1 is created (no part of the gang waits for the rest),
  // status says what it waits for, and a not-yet-created pod of the new attempt is never taken
  // for a vanished one.
  auto next = j;
  next.status = r.status;
  Pods terminating = pods;
  for (auto& p : terminating) p.deleting = true;
  auto w = reconcile(next, {}, observed(next, terminating), kT0 + 11);
  EXPECT_EQ(w.status.phase, Phase::kRestarting);
  EXPECT_EQ(w.status.disruptions, 1);
  EXPECT_EQ(deleted_pods(w), std::vector<std::string>{});
  EXPECT_EQ(count<CreatePod>(w), 0);
  EXPECT_EQ(w.status.nodes[2].message, "waiting for pod pp-node-2 of attempt 0 to terminate");
  next.status = w.status;
  const auto c = reconcile(next, {}, observed(next, {}), kT0 + 12);
  EXPECT_EQ(count<CreatePod>(c), 4);
  EXPECT_EQ(c.status.phase, Phase::kRestarting);
  EXPECT_EQ(c.status.disruptions, 1);
  EXPECT_EQ(c.status.attempt, 1);
  EXPECT_EQ(c.status.restarts, 0);
}

TEST(Reconcile, PodsNotYetSeenAreCreatedNotCountedAsDisrupted) {
  // A fresh job, or pods the cache has not delivered yet: no uid is recorded, so a missing
  // pod is (re)created, as before.
  auto j = in_phase(job("pp", 4, 8), Phase::kPending);
  const auto r = reconcile(j, {}, observed(j, {}), kT0 + 1);
  EXPECT_EQ(count<CreatePod>(r), 4);
  EXPECT_EQ(r.status.disruptions, 0);
  // After a suspend (pods deleted by the operator), resume starts a fresh attempt, not a
  // disruption.
  auto s = running_job();
  s.spec.run_policy.suspend = true;
  auto sr = reconcile(s, {}, observed(s, gang_pods(s, 0, "Running")), kT0 + 5);
  ASSERT_EQ(sr.status.phase, Phase::kSuspended);
  s.status = sr.status;
  s.spec.run_policy.suspend = false;
  sr = reconcile(s, {}, observed(s, {}), kT0 + 6);
  EXPECT_EQ(sr.status.phase, Phase::kPending);
  EXPECT_EQ(sr.status.disruptions, 0);
  EXPECT_EQ(count<CreatePod>(sr), 4);
}

TEST(Reconcile, EvictionAndNodeLossRestartTheGang) {
  struct C {
    std::string name;
    std::function<void(ObservedPod&)> disrupt;
    int want_deletes;
    std::string want_message;
  };
  const std::vector<C> cases = {
      {"DisruptionTarget, not yet deleted",
       [](ObservedPod& p) { p.disruption_target = "EvictionByEvictionAPI"; }, 4,
       "marked for disruption (EvictionByEvictionAPI)"},
      {"preempted and being deleted",
       [](ObservedPod& p) {
         p.disruption_target = "PreemptionByScheduler";
         p.deleting = true;
       },
       3, "deleted by Kubernetes (PreemptionByScheduler)"},
      {"killed by the kubelet for the preemption",
       [](ObservedPod& p) {
         p.disruption_target = "TerminationByKubelet";
         p.phase = "Failed";
         p.exit_code = 137;
       },
       4, "marked for disruption (TerminationByKubelet)"},
      {"node-pressure eviction",
       [](ObservedPod& p) {
         p.phase = "Failed";
         p.pod_reason = p.reason = "Evicted";
       },
       4, "stopped by its node (Evicted)"},
      {"node unreachable", [](ObservedPod& p) { p.phase = "Unknown"; }, 4,
       "lost with its node (phase Unknown)"},
      {"node lost (older node controllers)",
       [](ObservedPod& p) { p.pod_reason = p.reason = "NodeLost"; }, 4,
       "stopped by its node (NodeLost)"},
  };
  for (const auto& policy : {api::RestartPolicy::kExitCode, api::RestartPolicy::kNever,
                             api::RestartPolicy::kOnFailure}) {
    for (const auto& c : cases) {
      SCOPED_TRACE(c.name + " / " + api::to_string(policy));
      auto j = running_job();
      j.spec.run_policy.restart_policy = policy;
      Pods pods = gang_pods(j, 0, "Running");
      c.disrupt(pods[3]);
      const auto r = reconcile(j, {}, observed(j, pods), kT0 + 10);
      expect_disruption_restart(r, c.want_deletes);
      EXPECT_NE(r.status.message.find("node 3 (pod pp-node-3) was " + c.want_message),
                std::string::npos)
          << r.status.message;
    }
  }
}

TEST(Reconcile, DisruptionLimitFailsTheJob) {
  auto j = running_job(3, 1);
  j.spec.run_policy.disruption_limit = 2;
  j.status.disruptions = 2;
  Pods pods = gang_pods(j, 3, "Running");
  pods[0].deleting = true;
  const auto r = reconcile(j, {}, observed(j, pods), kT0 + 10);
  EXPECT_EQ(r.status.phase, Phase::kFailed);
  EXPECT_EQ(r.status.reason, "DisruptionLimitExceeded");
  EXPECT_NE(r.status.message.find("disruptionLimit is 2"), std::string::npos) << r.status.message;
  EXPECT_EQ(r.status.restarts, 1);
  EXPECT_EQ(r.status.attempt, 3);
  // disruptionLimit 0: the first disruption fails the job.
  auto z = running_job();
  z.spec.run_policy.disruption_limit = 0;
  Pods zp = gang_pods(z, 0, "Running");
  zp[1].phase = "Unknown";
  EXPECT_EQ(reconcile(z, {}, observed(z, zp), kT0 + 10).status.reason, "DisruptionLimitExceeded");
}

TEST(Reconcile, FinishedPodsDeletedLaterAreNotDisruptions) {
  // A pod that failed on its own and was then deleted is still that failure (ExitCode: 2 is
  // permanent), not a free retry.
  auto j = running_job();
  Pods pods = gang_pods(j, 0, "Failed");
  for (auto& p : pods) {
    p.exit_code = 2;
    p.finished_at = kT0 + 5;
  }
  pods[0].deleting = true;
  auto r = reconcile(j, {}, observed(j, pods), kT0 + 10);
  EXPECT_EQ(r.status.phase, Phase::kFailed);
  EXPECT_EQ(r.status.reason, "PermanentExitCode");
  EXPECT_EQ(r.status.disruptions, 0);
  // A rank that succeeded and whose pod is then deleted (a drain at the end) still counts as
  // succeeded.
  j = running_job();
  pods = gang_pods(j, 0, "Succeeded");
  pods[2].deleting = true;
  pods[2].disruption_target = "EvictionByEvictionAPI";
  r = reconcile(j, {}, observed(j, pods), kT0 + 10);
  EXPECT_EQ(r.status.phase, Phase::kSucceeded);
  EXPECT_EQ(r.status.disruptions, 0);
}

// --- collateral exits (exit_code::kPeerLost)
// ------------------------------------------------------

TEST(Reconcile, PeerLostRanksAreNotBlamed) {
  constexpr int kPeerLost = 200;
  // ExitCode: rank 2 exited 1 (its own bug); ranks 0 and 1 stopped because they lost it. The
  // job fails at once (the group has settled) blaming rank 2, though it is not the lowest rank
  // and not the first to be listed.
  auto j = running_job();
  Pods pods = gang_pods(j, 0, "Failed");
  for (auto& p : pods) p.finished_at = kT0 + 5;
  pods[0].exit_code = kPeerLost;
  pods[1].exit_code = kPeerLost;
  pods[2].exit_code = 1;
  pods[2].finished_at = kT0 + 6;  // even when its status says it finished later
  pods[3].exit_code = kPeerLost;
  auto r = reconcile(j, {}, observed(j, pods), kT0 + 10);
  EXPECT_EQ(r.status.phase, Phase::kFailed);
  EXPECT_EQ(r.status.reason, "PermanentExitCode") << "a collateral 200 is no reason to retry";
  EXPECT_NE(r.status.message.find("node 2 (pod pp-node-2) failed with exit code 1"),
            std::string::npos)
      << r.status.message;
  EXPECT_EQ(r.status.nodes[0].reason, "PeerLost");
  EXPECT_EQ(r.status.nodes[2].reason, "");
  // OnFailure: a killed rank (137) with collateral peers restarts, blaming the killed one.
  j = running_job();
  j.spec.run_policy.restart_policy = api::RestartPolicy::kOnFailure;
  pods = gang_pods(j, 0, "Running");
  pods[0].phase = pods[1].phase = "Failed";
  pods[0].exit_code = kPeerLost;
  pods[0].finished_at = kT0 + 4;
  pods[1].exit_code = 137;
  pods[1].finished_at = kT0 + 5;
  r = reconcile(j, {}, observed(j, pods), kT0 + 10);
  EXPECT_EQ(r.status.phase, Phase::kRestarting);
  EXPECT_EQ(r.status.reason, "NodeFailed");
  EXPECT_EQ(r.status.restarts, 1);
  EXPECT_NE(r.status.message.find("node 1 (pod pp-node-1) failed with exit code 137"),
            std::string::npos)
      << r.status.message;
}

TEST(Reconcile, PeerLostExitsWaitForTheLostRankToReport) {
  // Rank 0 exited 200 at T0+5 because rank 1 was killed; rank 1's 137 is not in yet.
  auto j = running_job();
  j.spec.run_policy.restart_policy = api::RestartPolicy::kOnFailure;
  Pods pods = gang_pods(j, 0, "Running");
  pods[0].phase = "Failed";
  pods[0].exit_code = 200;
  pods[0].finished_at = kT0 + 5;
  auto r = reconcile(j, {}, observed(j, pods), kT0 + 7);
  EXPECT_EQ(r.status, j.status) << "no verdict while the group may still explain it";
  EXPECT_TRUE(r.actions.empty());
  EXPECT_EQ(r.requeue_after_seconds, kExitCodeVerdictGraceSeconds - 2);
  // The killed rank reports: an ordinary failure, counted against backoffLimit.
  Pods killed = pods;
  killed[1].phase = "Failed";
  killed[1].exit_code = 137;
  killed[1].finished_at = kT0 + 5;
  r = reconcile(j, {}, observed(j, killed), kT0 + 8);
  EXPECT_EQ(r.status.reason, "NodeFailed");
  EXPECT_EQ((std::pair{r.status.restarts, r.status.disruptions}), (std::pair{1, 0}));
  // Nothing reports within the grace period: a disruption.
  r = reconcile(j, {}, observed(j, pods), kT0 + 5 + kExitCodeVerdictGraceSeconds);
  EXPECT_EQ(r.status.reason, "NodeDisrupted");
  EXPECT_EQ((std::pair{r.status.restarts, r.status.disruptions}), (std::pair{0, 1}));
}

TEST(Reconcile, OnlyPeerLostFailuresRestartAsADisruption) {
  // Every failed rank says a peer was lost and no pod shows a cause (a host vanished without
  // its pod status changing yet): restart, counted as a disruption, under every policy.
  for (const auto& policy : {api::RestartPolicy::kExitCode, api::RestartPolicy::kNever,
                             api::RestartPolicy::kOnFailure}) {
    SCOPED_TRACE(api::to_string(policy));
    auto j = running_job();
    j.spec.run_policy.restart_policy = policy;
    Pods pods = gang_pods(j, 0, "Running");
    pods[1].phase = pods[3].phase = "Failed";
    pods[1].exit_code = pods[3].exit_code = 200;
    const auto r = reconcile(j, {}, observed(j, pods), kT0 + 10);
    expect_disruption_restart(r, 4);
    EXPECT_NE(r.status.message.find("a peer was lost"), std::string::npos) << r.status.message;
  }
}

}  // namespace
}  // namespace ddp3d::op::controller
