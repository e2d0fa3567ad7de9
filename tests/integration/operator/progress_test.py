"""Training progress and startup, observed by ddp3d-operator against a real kube-apiserver.

There is no kubelet: the test writes pod status (phase Running and a podIP 127.0.0.<rank+1>,
binding each pod to a node name) and serves each rank's /metrics (Prometheus text) from a
small HTTP server on that address and the job's spec.metricsPort, so the operator's real
probe reads it and writes status through the API.

  - progress (step, epoch, rate, ETA) appears in status and in `kubectl get` columns;
  - steps that stop advancing past progressDeadlineSeconds restart the gang, with the Event
    and status.lastStall naming the stalled rank, its pod and node;
  - a pod waiting in ImagePullBackOff sets the Stuck condition naming the pod and reason;
  - startupDeadlineSeconds exceeded (a pod Unschedulable) fails the job
    (StartupDeadlineExceeded) and deletes its pods.
"""

import datetime
import http.server
import math
import os
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (NS, Cluster, Kube, Operator, OperatorLogOnFailure, free_port,  # noqa: E402
                     pods_of, training_job, wait_for)


class RankMetrics:
    """One rank's /metrics on 127.0.0.<rank+1>:port; `steps` None answers 503."""

    def __init__(self, rank, port, steps, max_steps=1000, epoch=1):
        self.steps, self.max_steps, self.epoch = steps, max_steps, epoch
        self.scrapes = 0
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server's name)
                owner.scrapes += 1
                if self.path != "/metrics" or owner.steps is None:
                    self.send_error(503)
                    return
                body = ("# TYPE ddp3d_train_steps_total counter\n"
                        f"ddp3d_train_steps_total {owner.steps}\n"
                        f"ddp3d_train_epoch {owner.epoch}\n"
                        f"ddp3d_train_max_steps {owner.max_steps}\n"
                        'ddp3d_train_loss{term="cls"} NaN\n').encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer((f"127.0.0.{rank + 1}", port), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class ProgressTest(OperatorLogOnFailure, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.cluster = Cluster().start()
        cls.kube = cls.cluster.kube
        # A probe every second (the default is 15 s) keeps the test short.
        cls.op = Operator(cls.cluster, "op-progress", leader_elect=False,
                          extra=("--progress-probe-seconds", "1",
                                 "--progress-probe-timeout-ms", "500"))
        cls.servers = []

    @classmethod
    def tearDownClass(cls):
        for s in cls.servers:
            s.close()
        cls.op.stop()
        cls.cluster.stop()

    # -- helpers -------------------------------------------------------------------
    def job(self, name):
        return self.kube.get(Kube.tj(NS, name))

    def status(self, name):
        j = self.job(name)
        return (j or {}).get("status", {})

    def condition(self, name, ctype):
        for c in self.status(name).get("conditions", []):
            if c["type"] == ctype:
                return c
        return None

    def create(self, name, nnodes, **run_policy):
        obj = training_job(name, nnodes=nnodes, **run_policy)
        port = free_port()
        obj["spec"]["metricsPort"] = port
        self.kube.create(Kube.tj(NS), obj)
        return port

    def serve(self, nnodes, port, steps):
        servers = [RankMetrics(r, port, s) for r, s in zip(range(nnodes), steps)]
        self.servers.extend(servers)
        return servers

    def wait_pods(self, name, n, attempt):
        def ready():
            pods = [p for p in pods_of(self.kube, self.job(name))
                    if not p["metadata"].get("deletionTimestamp")]
            if len(pods) == n and all(p["metadata"]["labels"]["ddp3d.io/attempt"] == str(attempt)
                                      for p in pods):
                return pods
            return None
        return wait_for(ready, 30, f"{n} pods of {name} in attempt {attempt}")

    def bind(self, pod, node):
        meta = pod["metadata"]
        self.kube.create(Kube.core(NS, "pods", meta["name"], "binding"), {
            "apiVersion": "v1", "kind": "Binding", "metadata": {"name": meta["name"]},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node}})

    def set_status(self, pod, phase, container_state, ip=None, conditions=None):
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        status = {"phase": phase, "startTime": now, "containerStatuses": [{
            "name": c["name"], "image": c.get("image", ""), "imageID": "",
            "ready": phase == "Running", "restartCount": 0, "state": container_state(now)}
            for c in pod["spec"]["containers"]]}
        if ip:
            status["podIP"] = ip
            status["podIPs"] = [{"ip": ip}]
        if conditions:
            status["conditions"] = [dict(c, lastTransitionTime=now) for c in conditions]
        self.kube.merge_patch(Kube.core(NS, "pods", pod["metadata"]["name"], "status"),
                              {"status": status})

    def set_running(self, pod):
        rank = int(pod["metadata"]["labels"]["ddp3d.io/node-rank"])
        self.bind(pod, f"gpu-node-{rank}")
        self.set_status(pod, "Running", lambda now: {"running": {"startedAt": now}},
                        ip=f"127.0.0.{rank + 1}")

    def events(self, name):
        return [e for e in self.kube.list(Kube.core(NS, "events"))
                if e["involvedObject"]["name"] == name]

    # -- tests ---------------------------------------------------------------------
    def test_progress_appears_in_status_and_printer_columns(self):
        port = self.create("progress", 2)
        ranks = self.serve(2, port, [100, 100])
        for p in self.wait_pods("progress", 2, 0):
            self.set_running(p)
        prog = wait_for(lambda: (p := self.status("progress").get("progress")) and
                        p.get("step") == 100 and p, 30, "status.progress.step 100")
        self.assertEqual((prog["epoch"], prog["maxSteps"], prog["attempt"]), (1, 1000, 0))
        # 20 more steps, once the clock has left the second of the first sample (status times
        # are whole seconds): a rate, an ETA and a completion time.
        first = datetime.datetime.strptime(prog["lastProgressTime"], "%Y-%m-%dT%H:%M:%SZ")
        first = first.replace(tzinfo=datetime.timezone.utc).timestamp()
        wait_for(lambda: time.time() >= first + 1, 5, "the next second")
        for r in ranks:
            r.steps, r.epoch = 120, 2
        prog = wait_for(lambda: (p := self.status("progress").get("progress")) and
                        p.get("step") == 120 and p.get("stepsPerSecond") and p, 30,
                        "a rate after the step advanced")
        self.assertGreater(prog["stepsPerSecond"], 0)
        self.assertEqual(prog["epoch"], 2)
        self.assertEqual(prog["etaSeconds"], math.ceil(880 / prog["stepsPerSecond"]))
        self.assertTrue(prog["eta"])
        self.assertTrue(prog["estimatedCompletionTime"].endswith("Z"))
        nodes = self.status("progress")["nodes"]
        self.assertEqual([n.get("step") for n in nodes], [120, 120])
        res = self.cluster.cp.kubectl("-n", NS, "get", "tj", "progress", check=True)
        header, row = res.stdout.splitlines()[:2]
        cols = dict(zip(header.split(), row.split()))
        self.assertEqual((cols["EPOCH"], cols["STEP"], cols["ETA"]), ("2", "120", prog["eta"]))
        # A rank that stops answering is named on its node; the steps of the other still count.
        ranks[1].steps = None
        wait_for(lambda: self.status("progress")["nodes"][1].get("message") ==
                 "metrics: HTTP 503", 30, "rank 1's scrape error in status.nodes[1].message")
        self.assertEqual(self.status("progress")["phase"], "Running")

    def test_steps_that_stop_advancing_restart_the_gang_naming_the_rank(self):
        port = self.create("stalled", 2, progressDeadlineSeconds=4, backoffLimit=2)
        self.serve(2, port, [50, 40])  # never advance; rank 1 is behind
        for p in self.wait_pods("stalled", 2, 0):
            self.set_running(p)
        wait_for(lambda: self.status("stalled").get("progress", {}).get("step") == 40, 30,
                 "progress at step 40")
        st = wait_for(lambda: (s := self.status("stalled")).get("attempt") == 1 and s, 30,
                      "a gang restart for the stall")
        self.assertEqual(st["restarts"], 1, "a stall counts against backoffLimit")
        self.assertEqual(st["disruptions"], 0)
        stall = st["lastStall"]
        self.assertEqual((stall["rank"], stall["pod"], stall["node"], stall["step"],
                          stall["attempt"]), (1, "stalled-node-1", "gpu-node-1", 40, 0))
        self.assertIn("past progressDeadlineSeconds=4", stall["message"])
        restarting = self.condition("stalled", "Restarting")
        self.assertEqual(restarting["reason"], "ProgressDeadlineExceeded")
        # The Event follows the status write (status first, then the actions).
        events = wait_for(lambda: [e for e in self.events("stalled")
                                   if e["reason"] == "ProgressDeadlineExceeded"], 10,
                          "a ProgressDeadlineExceeded Event")
        self.assertEqual(events[0]["type"], "Warning")
        self.assertIn("rank 1 (pod stalled-node-1 on node gpu-node-1)", events[0]["message"])
        # The whole gang is recreated as attempt 1, once the old pods are gone (bound pods are
        # deleted gracefully: the test plays the kubelet and finishes the deletion).
        def old_pods_gone():
            old = [p for p in pods_of(self.kube, self.job("stalled"))
                   if p["metadata"]["labels"]["ddp3d.io/attempt"] == "0"]
            for p in old:
                if p["metadata"].get("deletionTimestamp"):
                    self.kube.request("DELETE", Kube.core(NS, "pods", p["metadata"]["name"]),
                                      {"gracePeriodSeconds": 0})
            return not old
        wait_for(old_pods_gone, 30, "attempt 0's pods deleted")
        self.wait_pods("stalled", 2, 1)

    def test_image_pull_backoff_sets_a_condition_naming_the_pod(self):
        self.create("pull", 2)
        pods = self.wait_pods("pull", 2, 0)
        self.set_running(pods[0])
        self.set_status(pods[1], "Pending", lambda now: {"waiting": {
            "reason": "ImagePullBackOff",
            "message": 'Back-off pulling image "ddp3d/worker:nope"'}})
        c = wait_for(lambda: (c := self.condition("pull", "Stuck")) and c["status"] == "True"
                     and c, 30, "condition Stuck")
        self.assertEqual(c["reason"], "ImagePullBackOff")
        self.assertIn("pod pull-node-1 (rank 1): ImagePullBackOff", c["message"])
        self.assertIn('Back-off pulling image "ddp3d/worker:nope"', c["message"])
        node = self.status("pull")["nodes"][1]
        self.assertEqual(node["reason"], "ImagePullBackOff")
        wait_for(lambda: [e for e in self.events("pull") if e["reason"] == "ImagePullBackOff"
                          and "pull-node-1" in e["message"]], 30, "an ImagePullBackOff Event")
        self.assertEqual(self.status("pull")["phase"], "Starting")

    def test_startup_deadline_fails_the_job_and_deletes_its_pods(self):
        self.create("unplaced", 2, startupDeadlineSeconds=3, cleanPodPolicy="None")
        pods = self.wait_pods("unplaced", 2, 0)
        self.set_running(pods[0])
        self.set_status(pods[1], "Pending", lambda now: {"waiting": {}}, conditions=[{
            "type": "PodScheduled", "status": "False", "reason": "Unschedulable",
            "message": "0/3 nodes are available: 3 Insufficient nvidia.com/gpu."}])
        wait_for(lambda: (self.condition("unplaced", "Stuck") or {}).get("reason") ==
                 "Unschedulable", 30, "condition Stuck Unschedulable")
        st = wait_for(lambda: (s := self.status("unplaced")).get("phase") == "Failed" and s, 30,
                      "Failed after startupDeadlineSeconds")
        failed = self.condition("unplaced", "Failed")
        self.assertEqual(failed["reason"], "StartupDeadlineExceeded")
        self.assertIn("1 of 2 nodes running", failed["message"])
        self.assertIn("past startupDeadlineSeconds=3", failed["message"])
        self.assertIn("pod unplaced-node-1 (rank 1): Unschedulable: 0/3 nodes are available",
                      failed["message"])
        self.assertEqual(st["restarts"], 0)
        self.assertIn("StartupDeadlineExceeded", [e["reason"] for e in self.events("unplaced")])
        # cleanPodPolicy None, yet a partial gang must not hold GPUs: every pod is deleted.
        wait_for(lambda: all(p["metadata"].get("deletionTimestamp")
                             for p in pods_of(self.kube, self.job("unplaced"))), 30,
                 "every pod of the failed job deleted")


if __name__ == "__main__":
    unittest.main(verbosity=2)
