"""Lost nodes against a real kube-apiserver, the operator running as the chart's ServiceAccount
(docs/operator.md, "Node loss").

There is no kubelet here, so this test plays both the kubelets (pod status, the final delete
of a pod whose containers stopped) and the node lifecycle controller (a Node's Ready
condition). On a node whose "kubelet" is dead nothing completes a graceful pod deletion, as
on a real cluster: the pod stays Terminating until someone force-deletes it.

Proves: a job whose node stays not Ready past runPolicy.nodeLossTimeoutSeconds restarts as a
NodeLost disruption (not counted against backoffLimit), its pod on that node is force-deleted
and the next attempt's pods are created once every name is free; a pod left Terminating on a
node that dies later stops blocking the restart once that node is lost, and until then no pod
of the next attempt exists; a deleted Node is lost at once; status names each rank's node.
"""

import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (NS, Kube, OperatorSuite, holds_for, pods_of,  # noqa: E402
                     training_job, wait_for)

NODES = "/api/v1/nodes"


def condition(job, kind):
    return next(c for c in job["status"]["conditions"] if c["type"] == kind)


def now_rfc3339():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class NodeLossTest(OperatorSuite):
    operator_name = "op-nodes"

    # --- the parts of a cluster this test plays -------------------------------------------
    def add_node(self, name):
        self.kube.create(NODES, {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}})
        self.set_ready(name, "True", "KubeletReady")

    def set_ready(self, name, status, reason):
        """The Ready condition as a kubelet (True) or the node lifecycle controller (Unknown)
        writes it."""
        now = now_rfc3339()
        self.kube.merge_patch(f"{NODES}/{name}/status", {"status": {"conditions": [{
            "type": "Ready", "status": status, "reason": reason, "message": reason,
            "lastHeartbeatTime": now, "lastTransitionTime": now}]}})

    def bind(self, pod, node):
        meta = pod["metadata"]
        self.kube.create(Kube.core(NS, "pods", meta["name"], "binding"), {
            "apiVersion": "v1", "kind": "Binding", "metadata": {"name": meta["name"]},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node}})

    def finish_deletion(self, pod, exit_code):
        """What a live kubelet does with a pod being deleted: stop it, then remove it."""
        self.kubelet.set_terminated(pod, exit_code)
        meta = pod["metadata"]
        self.kube.request("DELETE", Kube.core(NS, "pods", meta["name"]),
                          {"gracePeriodSeconds": 0, "preconditions": {"uid": meta["uid"]}})

    # --- helpers ------------------------------------------------------------------------------
    def pods(self, name, attempt=None):
        return [p for p in pods_of(self.kube, self.job(name))
                if attempt is None or p["metadata"]["labels"]["ddp3d.io/attempt"] == str(attempt)]

    def start_running(self, name, nodes, **run_policy):
        self.kube.create(Kube.tj(NS), training_job(name, nnodes=len(nodes), **run_policy))
        pods = wait_for(lambda: (p := self.pods(name, 0)) and len(p) == len(nodes) and p, 30,
                        f"pods of {name}")
        for p, node in zip(pods, nodes):
            self.bind(p, node)
            self.kubelet.set_running(p)
        return wait_for(lambda: (j := self.job(name))["status"].get("phase") == "Running" and j,
                        30, f"{name} Running")

    def events(self, name, reason):
        return [e for e in self.kube.list(Kube.core(NS, "events"))
                if e["involvedObject"]["name"] == name and e["reason"] == reason]

    # --- scenarios ------------------------------------------------------------------------
    def test_a_lost_node_restarts_the_gang_and_its_pod_is_force_deleted(self):
        for n in ("lost-a", "lost-b"):
            self.add_node(n)
        job = self.start_running("lost", ["lost-a", "lost-b"], nodeLossTimeoutSeconds=3,
                                 backoffLimit=0)
        self.assertEqual([n.get("node") for n in job["status"]["nodes"]], ["lost-a", "lost-b"])

        self.set_ready("lost-b", "Unknown", "NodeStatusUnknown")
        # Within the timeout the job keeps running: a node may come back.
        holds_for(lambda: self.job("lost")["status"]["phase"] == "Running", 1.5,
                  "Running while the node is only briefly not Ready")
        job = wait_for(lambda: (j := self.job("lost"))["status"]["phase"] == "Restarting" and j,
                       30, "the NodeLost restart")
        st = job["status"]
        self.assertEqual((st["restarts"], st["disruptions"], st["attempt"]), (0, 1, 1))
        restarting = condition(job, "Restarting")
        self.assertEqual(restarting["reason"], "NodeLost")
        self.assertIn("node 1 (pod lost-node-1) was lost: node lost-b has been Ready=Unknown "
                      "(NodeStatusUnknown)", restarting["message"])

        # Rank 1's pod is gone at once (forced); rank 0's is Terminating, for its kubelet lives.
        wait_for(lambda: [p["metadata"]["name"] for p in self.pods("lost", 0)] == ["lost-node-0"],
                 30, "rank 1's pod force-deleted")
        rank0 = self.pods("lost", 0)[0]
        self.assertTrue(rank0["metadata"].get("deletionTimestamp"))
        self.assertEqual(len(self.events("lost", "ForceDeletedPod")), 1)
        # No pod of attempt 1 while rank 0's old pod holds its name.
        holds_for(lambda: not self.pods("lost", 1), 1.0, "no part of attempt 1 created early")
        self.finish_deletion(rank0, 201)  # checkpointed on SIGTERM, then exited
        pods = wait_for(lambda: (p := self.pods("lost", 1)) and len(p) == 2 and p, 30,
                        "attempt 1's pods")
        self.assertEqual(sorted(p["metadata"]["name"] for p in pods),
                         ["lost-node-0", "lost-node-1"])

    def test_a_pod_left_terminating_on_a_node_that_dies_stops_blocking_once_it_is_lost(self):
        for n in ("stuck-a", "stuck-b"):
            self.add_node(n)
        self.start_running("stuck", ["stuck-a", "stuck-b"], nodeLossTimeoutSeconds=4)
        # The kubelet of stuck-b dies unseen; rank 0 notices first and exits "peer lost".
        self.kubelet.set_terminated(self.pods("stuck", 0)[0], 200)
        wait_for(lambda: self.job("stuck")["status"].get("attempt") == 1, 40,
                 "the gang restart after the peer-lost exit")
        # Rank 0's pod had ended (200), so the API server removed it at once; stuck-b's pod
        # stays Terminating: nothing on that node answers.
        wait_for(lambda: [(p["metadata"]["name"], bool(p["metadata"].get("deletionTimestamp")))
                          for p in self.pods("stuck", 0)] == [("stuck-node-1", True)],
                 30, "only rank 1's pod left, Terminating")
        job = wait_for(lambda: (j := self.job("stuck"))["status"]["nodes"][1].get("message") and j,
                       30, "status saying what the restart waits for")
        self.assertEqual(job["status"]["nodes"][1]["message"],
                         "waiting for pod stuck-node-1 of attempt 0 to terminate on node stuck-b")
        holds_for(lambda: not self.pods("stuck", 1), 2.0,
                  "no pod of attempt 1 while a name is held")

        self.set_ready("stuck-b", "Unknown", "NodeStatusUnknown")
        pods = wait_for(lambda: (p := self.pods("stuck", 1)) and len(p) == 2 and p, 40,
                        "attempt 1 created once stuck-b is lost")
        self.assertFalse(any(p["metadata"].get("deletionTimestamp") for p in pods))
        self.assertEqual([p["metadata"]["name"] for p in self.pods("stuck", 0)], [])
        self.assertEqual(self.job("stuck")["status"]["restarts"], 0)

    def test_a_deleted_node_is_lost_at_once(self):
        for n in ("gone-a", "gone-b"):
            self.add_node(n)
        self.start_running("gone", ["gone-a", "gone-b"], nodeLossTimeoutSeconds=3600)
        self.kube.delete(f"{NODES}/gone-a")
        job = wait_for(lambda: (j := self.job("gone"))["status"]["phase"] == "Restarting" and j,
                       30, "the NodeLost restart")
        self.assertIn("node gone-a was deleted", condition(job, "Restarting")["message"])
        wait_for(lambda: "gone-node-0" not in [p["metadata"]["name"] for p in self.pods("gone", 0)],
                 30, "rank 0's pod force-deleted")


if __name__ == "__main__":
    unittest.main(verbosity=2)
