#include "operator/controller/cache_transforms.h"

#include <gtest/gtest.h>

#include "job_fixtures.h"
#include "operator/api/training_job.h"
#include "operator/controller/observed.h"

namespace ddp3d::op::controller {
namespace {

using testing::parse;
using web::json::value;

// A failed worker pod as the API server returns it: everything the kubelet and the field
// manager add, and every field observe_pod() reads.
const char* kFullPod = R"({
  "apiVersion": "v1", "kind": "Pod",
  "metadata": {
    "name": "pp-node-1", "namespace": "team", "uid": "pod-uid", "resourceVersion": "4711",
    "generation": 1, "creationTimestamp": "2026-01-01T00:00:00Z",
    "deletionTimestamp": "2026-01-01T00:10:00Z", "deletionGracePeriodSeconds": 30,
    "labels": {"ddp3d.io/job-name": "pp", "ddp3d.io/node-rank": "1", "ddp3d.io/attempt": "2"},
    "annotations": {"prometheus.io/scrape": "true",
                    "kubectl.kubernetes.io/last-applied-configuration": "{...}"},
    "ownerReferences": [{"apiVersion": "ddp3d.io/v1alpha1", "kind": "TrainingJob", "name": "pp",
                         "uid": "job-uid", "controller": true, "blockOwnerDeletion": true}],
    "managedFields": [{"manager": "ddp3d-operator", "operation": "Update",
                       "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {}}}]
  },
  "spec": {"containers": [{"name": "worker", "image": "ddp3d/worker:1",
                           "env": [{"name": "WORLD_SIZE", "value": "16"}]}],
           "hostname": "pp-node-1", "subdomain": "pp", "restartPolicy": "Never",
           "nodeName": "gpu-node-7"},
  "status": {
    "phase": "Failed", "reason": "Evicted", "message": "The node was low on resource: memory.",
    "hostIP": "10.0.0.1", "podIP": "10.1.0.7", "qosClass": "Guaranteed",
    "conditions": [
      {"type": "Ready", "status": "False", "lastTransitionTime": "2026-01-01T00:09:00Z"},
      {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
       "message": "0/3 nodes are available", "lastTransitionTime": "2026-01-01T00:09:00Z"},
      {"type": "DisruptionTarget", "status": "True", "reason": "TerminationByKubelet",
       "message": "long text", "lastTransitionTime": "2026-01-01T00:09:00Z"}],
    "containerStatuses": [
      {"name": "sidecar", "image": "busybox", "imageID": "sha", "containerID": "c1",
       "ready": false, "restartCount": 0,
       "state": {"terminated": {"exitCode": 0, "reason": "Completed",
                                "finishedAt": "2026-01-01T00:08:00Z", "containerID": "c1"}}},
      {"name": "worker", "image": "ddp3d/worker:1", "ready": false, "restartCount": 0,
       "lastState": {},
       "state": {"terminated": {"exitCode": 137, "reason": "OOMKilled",
                                "message": "a long termination message",
                                "startedAt": "2026-01-01T00:01:00Z",
                                "finishedAt": "2026-01-01T00:09:30Z"}}},
      {"name": "waiting", "state": {"waiting": {"reason": "ContainerCreating"}}},
      {"name": "pull", "imageID": "", "state": {"waiting": {"reason": "ImagePullBackOff",
       "message": "Back-off pulling image"}}}]
  }
})";

void expect_same(const ObservedPod& a, const ObservedPod& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.uid, b.uid);
  EXPECT_EQ(a.rank, b.rank);
  EXPECT_EQ(a.attempt, b.attempt);
  EXPECT_EQ(a.phase, b.phase);
  EXPECT_EQ(a.exit_code, b.exit_code);
  EXPECT_EQ(a.reason, b.reason);
  EXPECT_EQ(a.finished_at, b.finished_at);
  EXPECT_EQ(a.deleting, b.deleting);
  EXPECT_EQ(a.pod_reason, b.pod_reason);
  EXPECT_EQ(a.disruption_target, b.disruption_target);
  EXPECT_EQ(a.pod_ip, b.pod_ip);
  EXPECT_EQ(a.node_name, b.node_name);
  EXPECT_EQ(a.waiting_reason, b.waiting_reason);
  EXPECT_EQ(a.waiting_message, b.waiting_message);
  EXPECT_EQ(a.unschedulable_reason, b.unschedulable_reason);
  EXPECT_EQ(a.unschedulable_message, b.unschedulable_message);
}

TEST(SlimPod, WhatTheReconcilerReadsSurvives) {
  const value full = parse(kFullPod);
  const value slim = slim_pod(full);
  const ObservedPod before = observe_pod(full);
  expect_same(observe_pod(slim), before);
  // The fixture exercises every field, so an empty result cannot pass for a kept one.
  EXPECT_EQ(before.exit_code, 137);
  EXPECT_TRUE(before.finished_at.has_value());
  EXPECT_EQ(before.disruption_target, "TerminationByKubelet");
  EXPECT_TRUE(before.deleting);
  EXPECT_EQ(before.pod_ip, "10.1.0.7");
  EXPECT_EQ(before.node_name, "gpu-node-7");
  EXPECT_EQ(before.waiting_reason, "ImagePullBackOff") << "ContainerCreating is a normal start";
  EXPECT_EQ(before.waiting_message, "container pull: Back-off pulling image");
  EXPECT_EQ(before.unschedulable_message, "0/3 nodes are available");
  // The owner and cache lookups: key, owner uid and kind, labels, resourceVersion.
  const value& meta = slim.at("metadata");
  EXPECT_EQ(meta.at("namespace").as_string(), "team");
  EXPECT_EQ(meta.at("resourceVersion").as_string(), "4711");
  EXPECT_EQ(meta.at("ownerReferences"), full.at("metadata").at("ownerReferences"));
  EXPECT_EQ(meta.at("labels"), full.at("metadata").at("labels"));
}

TEST(SlimPod, DropsWhatNobodyReads) {
  const value full = parse(kFullPod);
  const value slim = slim_pod(full);
  const value& meta = slim.at("metadata");
  EXPECT_FALSE(meta.has_field("managedFields"));
  EXPECT_FALSE(meta.has_field("annotations"));
  EXPECT_EQ(slim.at("spec").size(), 1U) << "spec.nodeName only";
  const value& status = slim.at("status");
  EXPECT_FALSE(status.has_field("message"));
  EXPECT_FALSE(status.has_field("hostIP"));
  EXPECT_FALSE(status.at("conditions").at(0).has_field("lastTransitionTime"));
  const value& worker = status.at("containerStatuses").at(1);
  EXPECT_FALSE(worker.has_field("image"));
  EXPECT_FALSE(status.at("containerStatuses").at(3).has_field("imageID"));
  EXPECT_FALSE(worker.at("state").at("terminated").has_field("message"));
  EXPECT_FALSE(status.at("conditions").at(2).has_field("message")) << "DisruptionTarget's";
  // Kept: podIP, nodeName and why a pod is stuck (the probe and the Stuck condition read them).
  EXPECT_LT(slim.serialize().size(), full.serialize().size() * 6 / 10);
}

TEST(SlimPod, APendingPodWithoutStatusStaysReadable) {
  const value slim = slim_pod(parse(R"({"metadata": {"name": "p", "namespace": "n"}})"));
  EXPECT_EQ(observe_pod(slim).name, "p");
  EXPECT_FALSE(slim.has_field("status"));
  EXPECT_TRUE(slim_pod(value::null()).at("metadata").is_object()) << "garbage in: no throw";
}

TEST(SlimService, KeepsNameUidAndOwner) {
  const value full = parse(R"({
    "metadata": {"name": "pp", "namespace": "team", "uid": "svc-uid", "resourceVersion": "9",
      "labels": {"ddp3d.io/job-name": "pp"},
      "ownerReferences": [{"kind": "TrainingJob", "name": "pp", "uid": "job-uid",
                           "controller": true}],
      "managedFields": [{"manager": "x"}]},
    "spec": {"clusterIP": "None", "ports": [{"port": 29500}]},
    "status": {"loadBalancer": {}}})");
  const value slim = slim_service(full);
  EXPECT_EQ(observe_object(slim).name, "pp");
  EXPECT_EQ(observe_object(slim).uid, "svc-uid");
  EXPECT_EQ(slim.at("metadata").at("ownerReferences"), full.at("metadata").at("ownerReferences"));
  EXPECT_FALSE(slim.at("metadata").has_field("managedFields"));
  EXPECT_FALSE(slim.has_field("spec"));
}

TEST(SlimNode, KeepsOnlyTheReadyCondition) {
  const value full = parse(R"({
    "metadata": {"name": "worker-2", "uid": "n-uid", "resourceVersion": "7",
      "labels": {"kubernetes.io/hostname": "worker-2"}, "managedFields": [{"manager": "x"}]},
    "spec": {"podCIDR": "10.88.2.0/24", "taints": [{"key": "k", "effect": "NoSchedule"}]},
    "status": {
      "conditions": [
        {"type": "MemoryPressure", "status": "False", "reason": "KubeletHasSufficientMemory",
         "lastTransitionTime": "2026-12-01T10:00:00Z"},
        {"type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown",
         "message": "Kubelet stopped posting node status.",
         "lastHeartbeatTime": "2026-12-01T10:00:00Z",
         "lastTransitionTime": "2026-12-01T10:05:00Z"}],
      "images": [{"names": ["a"], "sizeBytes": 1}],
      "nodeInfo": {"kubeletVersion": "v1.36.3"}}})");
  const value slim = slim_node(full);
  const ObservedNode node = observe_node(slim);
  EXPECT_EQ(node, observe_node(full));
  EXPECT_EQ(node.name, "worker-2");
  EXPECT_EQ(node.ready, "Unknown");
  EXPECT_EQ(node.reason, "NodeStatusUnknown");
  EXPECT_EQ(node.ready_since, api::parse_rfc3339("2026-12-01T10:05:00Z"));
  EXPECT_EQ(slim.at("status").at("conditions").size(), 1u);
  EXPECT_FALSE(slim.at("status").has_field("images"));
  EXPECT_FALSE(slim.has_field("spec"));
  EXPECT_FALSE(slim.at("metadata").has_field("managedFields"));
  EXPECT_EQ(observe_node(slim_node(value::null())).ready, "") << "garbage in: no throw";
  EXPECT_EQ(observe_node(parse(R"({"status": {"conditions": 3}})")).ready, "");
}

TEST(SlimTrainingJob, ParsesTheSameAndKeepsOtherAnnotations) {
  value full = testing::job_json("pp", 4, 8);
  full["metadata"]["managedFields"] = parse(R"([{"manager": "kubectl"}])");
  full["metadata"]["annotations"] = parse(
      R"({"kubectl.kubernetes.io/last-applied-configuration": "{...}", "team": "perception"})");
  full["status"] = parse(R"({"phase": "Running", "attempt": 1})");
  const value slim = slim_training_job(full);
  EXPECT_FALSE(slim.at("metadata").has_field("managedFields"));
  EXPECT_EQ(slim.at("metadata").at("annotations").size(), 1u);
  EXPECT_EQ(slim.at("spec"), full.at("spec"));
  EXPECT_EQ(slim.at("status"), full.at("status"));
  const auto a = api::parse_training_job(full);
  const auto b = api::parse_training_job(slim);
  EXPECT_EQ(a.errors.size(), b.errors.size());
  EXPECT_EQ(b.job.meta.uid, a.job.meta.uid);
  EXPECT_EQ(b.job.meta.resource_version, a.job.meta.resource_version);
  EXPECT_EQ(b.job.spec.nnodes, 4);
  EXPECT_TRUE(b.job.status == a.job.status);

  value only_last_applied = testing::job_json();
  only_last_applied["metadata"]["annotations"] =
      parse(R"({"kubectl.kubernetes.io/last-applied-configuration": "{}"})");
  EXPECT_FALSE(slim_training_job(only_last_applied).at("metadata").has_field("annotations"));
}

}  // namespace
}  // namespace ddp3d::op::controller
