#include "operator/api/training_job.h"

#include <gtest/gtest.h>

#include "job_fixtures.h"

namespace ddp3d::op::api {
namespace {

using testing::parse;

TEST(TrainingJobParse, FillsDefaults) {
  auto p = parse_training_job(parse(R"({"metadata": {"name": "j", "namespace": "n",
      "uid": "u", "generation": 4}, "spec": {"config": "c.yaml", "image": "i"}})"));
  ASSERT_TRUE(p.errors.empty()) << join(p.errors);
  const auto& s = p.job.spec;
  EXPECT_EQ(s.nnodes, 1);
  EXPECT_EQ(s.gpus_per_node, 0);
  EXPECT_EQ(s.port, 29500);
  EXPECT_EQ(s.run_policy.restart_policy, RestartPolicy::kOnFailure);
  EXPECT_EQ(s.run_policy.backoff_limit, 3);
  EXPECT_EQ(s.run_policy.clean_pod_policy, CleanPodPolicy::kRunning);
  EXPECT_FALSE(s.run_policy.suspend);
  EXPECT_FALSE(s.run_policy.active_deadline_seconds);
  EXPECT_FALSE(s.run_policy.ttl_seconds_after_finished);
  EXPECT_TRUE(s.pod_template.is_object());
  EXPECT_TRUE(s.network.rendezvous_secret);  // secure by default
  EXPECT_FALSE(s.network.policy);            // needs an enforcing network plugin
  EXPECT_TRUE(s.network.metrics_namespaces.empty());
  EXPECT_EQ(p.job.meta.generation, 4);
  EXPECT_EQ(p.job.status.phase, Phase::kNone);
}

TEST(TrainingJobParse, ReadsEveryField) {
  auto p = parse_training_job(parse(R"({"metadata": {"name": "j", "namespace": "n",
      "deletionTimestamp": "2026-01-01T00:00:00Z", "labels": {"team": "perception"}},
    "spec": {"nnodes": 4, "gpusPerNode": 8, "port": 23456, "config": "c.yaml",
      "args": ["--seed", "1"], "image": "img",
      "env": [{"name": "NCCL_DEBUG", "value": "INFO"}],
      "template": {"spec": {"nodeSelector": {"gpu": "h100"}}},
      "runPolicy": {"restartPolicy": "ExitCode", "backoffLimit": 5,
        "activeDeadlineSeconds": 3600, "ttlSecondsAfterFinished": 60,
        "cleanPodPolicy": "All", "suspend": true}}})"));
  ASSERT_TRUE(p.errors.empty()) << join(p.errors);
  const auto& s = p.job.spec;
  EXPECT_TRUE(p.job.meta.deleting);
  EXPECT_EQ(p.job.meta.labels.at("team"), "perception");
  EXPECT_EQ(s.nnodes, 4);
  EXPECT_EQ(s.gpus_per_node, 8);
  EXPECT_EQ(s.port, 23456);
  EXPECT_EQ(s.args, (std::vector<std::string>{"--seed", "1"}));
  ASSERT_EQ(s.env.size(), 1u);
  EXPECT_EQ(s.env[0].at("name").as_string(), "NCCL_DEBUG");
  EXPECT_EQ(s.pod_template.at("spec").at("nodeSelector").at("gpu").as_string(), "h100");
  EXPECT_EQ(s.run_policy.restart_policy, RestartPolicy::kExitCode);
  EXPECT_EQ(s.run_policy.backoff_limit, 5);
  EXPECT_EQ(s.run_policy.active_deadline_seconds, 3600);
  EXPECT_EQ(s.run_policy.ttl_seconds_after_finished, 60);
  EXPECT_EQ(s.run_policy.clean_pod_policy, CleanPodPolicy::kAll);
  EXPECT_TRUE(s.run_policy.suspend);
}

TEST(TrainingJobParse, TypeErrorsNameTheField) {
  auto p = parse_training_job(parse(R"({"metadata": {"name": "j"},
    "spec": {"nnodes": "two", "gpusPerNode": 1.5, "config": 3, "args": ["ok", 7],
      "runPolicy": {"restartPolicy": "Sometimes", "cleanPodPolicy": "Some",
                    "suspend": "yes"}}})"));
  std::vector<std::string> paths;
  for (const auto& e : p.errors) paths.push_back(e.path);
  EXPECT_EQ(paths,
            (std::vector<std::string>{"spec.nnodes", "spec.gpusPerNode", "spec.config",
                                      "spec.args[1]", "spec.runPolicy.restartPolicy",
                                      "spec.runPolicy.cleanPodPolicy", "spec.runPolicy.suspend"}))
      << join(p.errors);
  EXPECT_NE(join(p.errors).find("\"Sometimes\""), std::string::npos);
}

TEST(TrainingJobParse, NetworkFieldsAndTheirTypeErrors) {
  auto ok = parse_training_job(parse(R"({"metadata": {"name": "j"}, "spec": {"config": "c",
    "image": "i", "network": {"rendezvousSecret": false, "policy": true,
      "metricsNamespaces": ["monitoring"]}}})"));
  ASSERT_TRUE(ok.errors.empty()) << join(ok.errors);
  EXPECT_FALSE(ok.job.spec.network.rendezvous_secret);
  EXPECT_TRUE(ok.job.spec.network.policy);
  EXPECT_EQ(ok.job.spec.network.metrics_namespaces, std::vector<std::string>{"monitoring"});
  auto bad = parse_training_job(parse(R"({"metadata": {"name": "j"}, "spec": {"config": "c",
    "image": "i", "network": {"rendezvousSecret": "no", "metricsNamespaces": [1]}}})"));
  std::vector<std::string> paths;
  for (const auto& e : bad.errors) paths.push_back(e.path);
  EXPECT_EQ(paths, (std::vector<std::string>{"spec.network.rendezvousSecret",
                                             "spec.network.metricsNamespaces[0]"}))
      << join(bad.errors);
}

TEST(TrainingJobParse, MissingSpec) {
  auto p = parse_training_job(parse(R"({"metadata": {"name": "j"}})"));
  ASSERT_EQ(p.errors.size(), 1u);
  EXPECT_EQ(p.errors[0].path, "spec");
}

TEST(TrainingJobStatus, JsonRoundTrip) {
  TrainingJobStatus st;
  st.phase = Phase::kRestarting;
  st.reason = "NodeFailed";
  st.message = "node 1 failed";
  st.restarts = 2;
  st.attempt = 3;
  st.start_time = "2026-11-30T10:00:00Z";
  st.observed_generation = 7;
  st.conditions.push_back(
      {"Restarting", "True", "NodeFailed", "node 1 failed", "2026-11-30T10:01:00Z"});
  st.nodes.push_back(
      {0, "pp-node-0", "Running", std::nullopt, "", "uid-0", "", std::nullopt, "worker-3"});
  st.nodes.push_back({1, "pp-node-1", "Failed", 137, "OOMKilled", "", "", std::nullopt, ""});
  // --- progress and startup ---
  st.nodes.push_back({2, "pp-node-2", "Pending", std::nullopt, "ImagePullBackOff", "uid-2",
                      "container worker: Back-off pulling image", 1234, ""});
  st.attempt_start_time = "2026-11-30T10:02:00Z";
  TrainingProgress progress;
  progress.attempt = 3;
  progress.step = 1234;
  progress.epoch = 4;
  progress.max_steps = 37120;
  progress.steps_per_second = 2.125;
  progress.eta_seconds = 16887;
  progress.estimated_completion_time = "2026-11-30T14:43:27Z";
  progress.eta = "4h41m";
  progress.last_progress_time = "2026-11-30T10:02:00Z";
  st.progress = progress;
  st.last_stall = StallRecord{2, 1, "pp-node-1", "gpu-7", 1000, "2026-11-30T10:01:00Z", "stalled"};
  std::vector<FieldError> errors;
  const auto back = status_from_json(status_to_json(st), &errors);
  EXPECT_TRUE(errors.empty()) << join(errors);
  EXPECT_EQ(back, st);
  EXPECT_EQ(status_to_json(st).at("phase").as_string(), "Restarting");
  // reason/message live in the phase's condition only (the CRD has no top-level fields).
  EXPECT_FALSE(status_to_json(st).has_field("reason"));
  EXPECT_EQ(back.reason, "NodeFailed");
}

TEST(TrainingJobStatus, ARateTheServerWritesAsAnIntegerReadsBack) {
  std::vector<FieldError> errors;
  const auto st = status_from_json(
      web::json::value::parse(R"({"phase": "Running", "progress": {"step": 5, "stepsPerSecond": 2,
                                  "lastProgressTime": "2026-11-30T10:02:00Z"}})"),
      &errors);
  EXPECT_TRUE(errors.empty()) << join(errors);
  ASSERT_TRUE(st.progress);
  EXPECT_EQ(st.progress->steps_per_second, 2.0);
  status_from_json(web::json::value::parse(R"({"phase": "Running", "progress": {"step": "x"}})"),
                   &errors);
  ASSERT_EQ(errors.size(), 1U);
  EXPECT_EQ(errors[0].path, "status.progress.step");
}

TEST(TrainingJobParse, ReadsTheDeadlines) {
  auto v = testing::job_json();
  v["spec"]["runPolicy"] =
      web::json::value::parse(R"({"startupDeadlineSeconds": 300, "progressDeadlineSeconds": 900})");
  const auto parsed = parse_training_job(v);
  EXPECT_TRUE(parsed.errors.empty());
  EXPECT_EQ(parsed.job.spec.run_policy.startup_deadline_seconds, 300);
  EXPECT_EQ(parsed.job.spec.run_policy.progress_deadline_seconds, 900);
  EXPECT_FALSE(testing::job().spec.run_policy.startup_deadline_seconds) << "no default";
}

TEST(TrainingJobParse, NodeLossTimeoutHasADefaultAndReadsAValue) {
  EXPECT_EQ(testing::job().spec.run_policy.node_loss_timeout_seconds,
            kDefaultNodeLossTimeoutSeconds);
  auto v = testing::job_json();
  v["spec"]["runPolicy"] = web::json::value::parse(R"({"nodeLossTimeoutSeconds": 0})");
  const auto parsed = parse_training_job(v);
  EXPECT_TRUE(parsed.errors.empty());
  EXPECT_EQ(parsed.job.spec.run_policy.node_loss_timeout_seconds, 0);
}

TEST(TrainingJobStatus, EachRanksNodeRoundTrips) {
  TrainingJobStatus st;
  st.phase = Phase::kRunning;
  NodeStatus n;
  n.rank = 1;
  n.pod = "pp-node-1";
  n.phase = "Running";
  n.node = "worker-7";
  st.nodes.push_back(n);
  const auto json = status_to_json(st);
  EXPECT_EQ(json.at("nodes").at(0).at("node").as_string(), "worker-7");
  std::vector<FieldError> errors;
  EXPECT_EQ(status_from_json(json, &errors).nodes.at(0), n);
  EXPECT_TRUE(errors.empty());
}

TEST(TrainingJobStatus, EarlyPhasesTakeReasonFromCreated) {
  TrainingJobStatus st;
  st.phase = Phase::kStarting;
  st.conditions.push_back({"Created", "True", "NodesStarting", "1 of 2", "t"});
  std::vector<FieldError> errors;
  const auto back = status_from_json(status_to_json(st), &errors);
  EXPECT_EQ(back.reason, "NodesStarting");
  EXPECT_EQ(back.message, "1 of 2");
}

}  // namespace
}  // namespace ddp3d::op::api
