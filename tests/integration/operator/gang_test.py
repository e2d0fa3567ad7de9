"""Gang placement against a real kube-apiserver, the operator running as the chart's
ServiceAccount (docs/operator.md, "Gang placement").

Served: with the PodGroup API on (Kubernetes 1.36's scheduling.k8s.io/v1alpha2 behind the
GenericWorkload gate), every attempt gets its own PodGroup, owned by the job, with minCount =
nnodes, created by the operator before its pods, and every pod of the attempt names it in
spec.schedulingGroup (which the API server keeps: it drops the field when the API is off);
the GangScheduling condition is True. NotServed: on a cluster without the API the pods are
placed one by one, the condition says so, with one Warning event, and the operator's log
says so once.

Elastic size (docs/operator.md, "Elastic size"): with no scheduler in this control plane no
pod is ever placed, so a 3-node job with minNodes 2 restarts on 2 after placementTimeoutSeconds
(a PodGroup of 2, NNODES 2, the batch world of 3) and stays there; once Running it looks for
room with a probe pod, and binding that probe (as the scheduler would) grows it back to 3.
"""

import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import NS, Kube, OperatorSuite, pods_of, training_job, wait_for  # noqa: E402

PODGROUPS = f"/apis/scheduling.k8s.io/v1alpha2/namespaces/{NS}/podgroups"


def condition(job, kind):
    return next((c for c in job.get("status", {}).get("conditions", []) if c["type"] == kind),
                None)


class GangBase(OperatorSuite):
    operator_name = "op-gang"

    def live_pods(self, name, attempt, n):
        pods = [p for p in pods_of(self.kube, self.job(name))
                if not p["metadata"].get("deletionTimestamp")
                and p["metadata"]["labels"]["ddp3d.io/attempt"] == str(attempt)]
        return pods if len(pods) == n else None


class Served(GangBase):
    def test_each_attempt_is_one_pod_group_that_its_pods_name(self):
        self.kube.create(Kube.tj(NS), training_job("trio", nnodes=3, backoffLimit=2))
        pods = wait_for(lambda: self.live_pods("trio", 0, 3), 30, "attempt 0's pods")
        job = self.job("trio")
        group = self.kube.get(f"{PODGROUPS}/trio-gang-0")
        self.assertIsNotNone(group, "attempt 0's PodGroup")
        self.assertEqual(group["spec"]["schedulingPolicy"], {"gang": {"minCount": 3}})
        owner = group["metadata"]["ownerReferences"][0]
        self.assertEqual((owner["kind"], owner["uid"], owner["controller"]),
                         ("TrainingJob", job["metadata"]["uid"], True))
        self.assertEqual(group["metadata"]["labels"]["ddp3d.io/attempt"], "0")
        for p in pods:
            self.assertEqual(p["spec"]["schedulingGroup"], {"podGroupName": "trio-gang-0"})
        gang = wait_for(lambda: condition(self.job("trio"), "GangScheduling"), 30,
                        "the GangScheduling condition")
        self.assertEqual((gang["status"], gang["reason"]), ("True", "PodGroup"))
        self.assertIn("PodGroup trio-gang-0, scheduling.k8s.io/v1alpha2", gang["message"])

        # A gang restart: the next attempt is a PodGroup of its own.
        for p in pods:
            self.kubelet.set_running(p)
        self.kubelet.set_terminated(pods[1], 137)
        pods = wait_for(lambda: self.live_pods("trio", 1, 3), 30, "attempt 1's pods")
        for p in pods:
            self.assertEqual(p["spec"]["schedulingGroup"], {"podGroupName": "trio-gang-1"})
        self.assertEqual(self.kube.get(f"{PODGROUPS}/trio-gang-1")["spec"]["schedulingPolicy"],
                         {"gang": {"minCount": 3}})

    def test_run_policy_turns_it_off(self):
        self.kube.create(Kube.tj(NS), training_job("solo", nnodes=2, gangScheduling=False))
        pods = wait_for(lambda: self.live_pods("solo", 0, 2), 30, "the pods")
        for p in pods:
            self.assertNotIn("schedulingGroup", p["spec"])
        self.assertIsNone(self.kube.get(f"{PODGROUPS}/solo-gang-0"))
        gang = wait_for(lambda: condition(self.job("solo"), "GangScheduling"), 30, "the condition")
        self.assertEqual((gang["status"], gang["reason"]), ("False", "Disabled"))


class Elastic(GangBase):
    def test_an_unplaced_gang_runs_smaller_and_a_placed_probe_grows_it_back(self):
        self.kube.create(Kube.tj(NS), training_job(
            "stretch", nnodes=3, elastic={"minNodes": 2, "placementTimeoutSeconds": 4,
                                          "growIntervalSeconds": 2}))
        wait_for(lambda: self.live_pods("stretch", 0, 3), 30, "attempt 0's pods")
        pods = wait_for(lambda: self.live_pods("stretch", 1, 2), 30, "attempt 1's 2 pods")
        job = self.job("stretch")
        self.assertEqual((job["status"]["size"], job["status"]["restarts"],
                          job["status"]["disruptions"]), (2, 0, 0))
        full = condition(job, "FullSize")
        self.assertEqual((full["status"], full["reason"]), ("False", "PlacementTimeout"))
        self.assertEqual(self.kube.get(f"{PODGROUPS}/stretch-gang-1")["spec"]["schedulingPolicy"],
                         {"gang": {"minCount": 2}})
        for p in pods:
            env = {e["name"]: e.get("value") for e in p["spec"]["containers"][0]["env"]}
            self.assertEqual((env["NNODES"], env["WORLD_SIZE"], env["DDP3D_BATCH_WORLD_SIZE"]),
                             ("2", "2", "3"))
        # At minNodes it waits as it is: no attempt 2 while nothing is placed.
        time.sleep(5)
        self.assertEqual(self.job("stretch")["status"]["attempt"], 1)

        for p in pods:
            self.kubelet.set_running(p)

        def probe():
            got = self.kube.list(Kube.core(NS, "pods"), "ddp3d.io/role=grow-probe")
            return got[0] if got else None
        p = wait_for(probe, 30, "a grow probe")
        self.assertEqual(p["metadata"]["name"], "stretch-probe-0")
        self.assertEqual(p["metadata"]["labels"]["ddp3d.io/attempt"], "1")
        self.assertEqual(p["spec"]["terminationGracePeriodSeconds"], 0)
        self.kube.create(Kube.core(NS, "pods", p["metadata"]["name"], "binding"), {
            "apiVersion": "v1", "kind": "Binding", "metadata": {"name": p["metadata"]["name"]},
            "target": {"apiVersion": "v1", "kind": "Node", "name": "roomy-node"}})
        pods = wait_for(lambda: self.live_pods("stretch", 2, 3), 30, "attempt 2's 3 pods")
        for p in pods:
            env = {e["name"]: e.get("value") for e in p["spec"]["containers"][0]["env"]}
            self.assertEqual((env["NNODES"], env["DDP3D_BATCH_WORLD_SIZE"]), ("3", "3"))
        job = self.job("stretch")
        self.assertEqual((job["status"]["size"], job["status"]["restarts"],
                          job["status"]["disruptions"]), (3, 0, 0))
        self.assertEqual(condition(job, "FullSize")["status"], "True")
        wait_for(lambda: not probe(), 30, "the probe gone")
        reasons = {e["reason"] for e in self.kube.list(Kube.core(NS, "events"))
                   if e["involvedObject"]["name"] == "stretch"}
        self.assertLessEqual({"PlacementTimeout", "GrowProbe", "GrowBack"}, reasons)


class NotServed(GangBase):
    cluster_args = {"pod_groups": False}

    def test_pods_are_placed_one_by_one_and_the_job_says_so(self):
        self.kube.create(Kube.tj(NS), training_job("plain", nnodes=2))
        pods = wait_for(lambda: self.live_pods("plain", 0, 2), 30, "the pods")
        for p in pods:
            self.assertNotIn("schedulingGroup", p["spec"])
        gang = wait_for(lambda: condition(self.job("plain"), "GangScheduling"), 30, "the condition")
        self.assertEqual((gang["status"], gang["reason"]), ("False", "NotServed"))
        self.assertIn("placement is not all-or-nothing", gang["message"])
        events = wait_for(lambda: [e for e in self.kube.list(Kube.core(NS, "events"))
                                   if e["involvedObject"]["name"] == "plain"
                                   and e["reason"] == "NotServed"], 30, "the Warning event")
        self.assertEqual(len(events), 1)
        self.assertEqual(events[0]["type"], "Warning")
        self.assertEqual(self.op.logs().count("the cluster serves no PodGroup API"), 1)


if __name__ == "__main__":
    unittest.main(verbosity=2)
