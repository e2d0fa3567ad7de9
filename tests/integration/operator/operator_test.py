"""ddp3d-operator against a real kube-apiserver + etcd, running as the chart's
ServiceAccount under RBAC (so the ClusterRole is proven sufficient).

Three suites, each with its own control plane (select one with argv[1]):
  ReconcileTest   Service + pods with the exact env contract; status follows pod states
                  written by the test (playing kubelet): Running, gang restart with
                  attempt+1, backoffLimit, permanent exit codes, Succeeded, cleanPodPolicy,
                  TTL, suspend/resume (Running Unknown before it runs; a repeated Event is
                  one Event counted, one deleted is created anew), long names, invalid
                  template env; printer columns;
                  a deleted or evicted pod restarts the whole gang (disruptions, not
                  restarts); the deadline kill retried after an admission policy refused a
                  delete.
  ResilienceTest  SIGKILL of the operator mid-reconcile and a kube-apiserver restart end
                  with no duplicate and no orphaned pod, and the operator keeps working.
  LeaderTest      two replicas: only the Lease holder acts; SIGKILL it and the other takes
                  over; SIGTERM releases the Lease at once; a leader cut off from the API
                  server (a proxy that goes silent) exits 1 within the renew deadline, before
                  its Lease expires, and the other takes over only after expiry.
"""

import datetime
import os
import re
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (NS, SYSTEM_NS, Cluster, Kubelet, Kube, Operator,  # noqa: E402
                     StallingProxy, holds_for, pods_of, training_job, wait_for)
from kube_rest import ApiError  # noqa: E402

CONTRACT = ["NNODES", "NODE_RANK", "MASTER_ADDR", "PORT", "GPUS", "MASTER_PORT", "WORLD_SIZE",
            "PET_NNODES", "PET_NODE_RANK", "PET_NPROC_PER_NODE", "PET_MASTER_ADDR",
            "PET_MASTER_PORT", "DDP3D_JOB", "DDP3D_ATTEMPT", "DDP3D_METRICS_PORT",
            "DDP3D_BATCH_WORLD_SIZE"]


class OperatorSuite(unittest.TestCase):
    replicas = 1
    leader_elect = True

    @classmethod
    def setUpClass(cls):
        cls.cluster = Cluster().start()
        cls.kube = cls.cluster.kube
        cls.kubelet = Kubelet(cls.kube)
        cls.ops = []
        if cls.replicas:
            cls.op = cls.start_operator("op-a")

    @classmethod
    def start_operator(cls, name, kubeconfig=None):
        op = Operator(cls.cluster, name, leader_elect=cls.leader_elect, kubeconfig=kubeconfig)
        cls.ops.append(op)
        return op

    @classmethod
    def tearDownClass(cls):
        for op in cls.ops:
            op.stop()
        cls.cluster.stop()

    def run(self, result=None):
        # On failure, the operator's log is the first thing one needs.
        res = super().run(result)
        if res and (res.failures or res.errors):
            for op in self.ops:
                sys.stderr.write(f"\n--- {op.name} log (tail) ---\n{op.logs()[-6000:]}\n")
        return res

    # -- helpers ---------------------------------------------------------------
    def apply(self, obj):
        return self.kube.create(Kube.tj(NS), obj)

    def job(self, name):
        return self.kube.get(Kube.tj(NS, name))

    def wait_phase(self, name, phase, timeout=30):
        return wait_for(lambda: (j := self.job(name)) and j.get("status", {}).get("phase") == phase
                        and j, timeout, f"{name} phase {phase} (now {self.phase(name)})")

    def phase(self, name):
        j = self.job(name)
        return j and j.get("status", {}).get("phase")

    def wait_pods(self, name, n, attempt, timeout=30):
        def ready():
            j = self.job(name)
            pods = pods_of(self.kube, j)
            live = [p for p in pods if not p["metadata"].get("deletionTimestamp")]
            if len(live) == n and all(
                    p["metadata"]["labels"]["ddp3d.io/attempt"] == str(attempt) for p in live):
                return live
            return None
        return wait_for(ready, timeout, f"{n} pods of {name} in attempt {attempt}")

    def condition(self, job, ctype):
        for c in job["status"].get("conditions", []):
            if c["type"] == ctype:
                return c
        return None


class ReconcileTest(OperatorSuite):
    def test_service_and_pods_carry_the_contract(self):
        job = self.apply(training_job("contract", nnodes=3, gpus=2))
        pods = self.wait_pods("contract", 3, 0)
        svcs = [s for s in self.kube.list(Kube.core(NS, "services"), "ddp3d.io/job-name=contract")]
        self.assertEqual(len(svcs), 1)
        svc = svcs[0]
        self.assertEqual(svc["metadata"]["name"], "contract")
        self.assertEqual(svc["spec"]["clusterIP"], "None")
        self.assertTrue(svc["spec"]["publishNotReadyAddresses"])
        self.assertEqual(svc["spec"]["selector"], {"ddp3d.io/job-name": "contract"})
        master = f"contract-node-0.contract.{NS}.svc"
        for rank, pod in enumerate(pods):
            name = f"contract-node-{rank}"
            meta, spec = pod["metadata"], pod["spec"]
            self.assertEqual(meta["name"], name)
            self.assertEqual(meta["labels"], {"ddp3d.io/job-name": "contract",
                                              "ddp3d.io/node-rank": str(rank),
                                              "ddp3d.io/attempt": "0",
                                              "app.kubernetes.io/name": "ddp3d",
                                              "app.kubernetes.io/instance": "contract",
                                              "app.kubernetes.io/component": "rank",
                                              "app.kubernetes.io/managed-by": "ddp3d-operator"})
            ref = meta["ownerReferences"][0]
            self.assertEqual((ref["kind"], ref["name"], ref["uid"], ref["controller"],
                              ref["blockOwnerDeletion"]),
                             ("TrainingJob", "contract", job["metadata"]["uid"], True, True))
            self.assertEqual((spec["hostname"], spec["subdomain"], spec["restartPolicy"]),
                             (name, "contract", "Never"))
            c = spec["containers"][0]
            self.assertEqual(c["resources"]["limits"]["nvidia.com/gpu"], "2")
            self.assertEqual(c["command"], ["bash", "tools/dist_train.sh"])
            self.assertEqual(c["args"], [job["spec"]["config"], "2", "--work-dir",
                                         "/data/work_dirs/contract", "--resume", "auto"])
            self.assertEqual(spec["terminationGracePeriodSeconds"], 60)
            env = [(e["name"], e.get("value") or e["valueFrom"]["secretKeyRef"]["name"])
                   for e in c["env"]]
            self.assertEqual(env, [
                ("NNODES", "3"), ("NODE_RANK", str(rank)), ("MASTER_ADDR", master),
                ("PORT", "29500"), ("GPUS", "2"), ("MASTER_PORT", "29500"),
                ("WORLD_SIZE", "6"), ("PET_NNODES", "3"), ("PET_NODE_RANK", str(rank)),
                ("PET_NPROC_PER_NODE", "2"), ("PET_MASTER_ADDR", master),
                ("PET_MASTER_PORT", "29500"), ("DDP3D_JOB", "contract"), ("DDP3D_ATTEMPT", "0"),
                ("DDP3D_METRICS_PORT", "9400"), ("DDP3D_BATCH_WORLD_SIZE", "6"),
                ("DDP3D_RENDEZVOUS_TOKEN", "contract-rendezvous-0")])
            self.assertEqual([(p["name"], p["containerPort"]) for p in c["ports"]],
                             [("metrics", 9400), ("metrics-1", 9401)])
        # MASTER_ADDR is rank 0's DNS name under the Service: <hostname>.<subdomain>.<ns>.svc
        p0 = pods[0]["spec"]
        self.assertEqual(master, f"{p0['hostname']}.{p0['subdomain']}.{NS}.svc")
        self.wait_phase("contract", "Starting")
        out = self.cluster.cp.kubectl("get", "tj", "contract", "-n", NS, check=True).stdout
        header, row = out.splitlines()[:2]
        self.assertEqual(header.split(), ["NAME", "PHASE", "NODES", "SIZE", "GPUS/NODE",
                                          "RESTARTS", "EPOCH", "STEP", "ETA", "QUEUE", "AGE"])
        self.assertEqual(row.split()[:6], ["contract", "Starting", "3", "3", "2", "0"])

    def test_status_follows_pods_through_restart_to_success(self):
        self.apply(training_job("life", nnodes=3, gpus=1, backoffLimit=2, cleanPodPolicy="All",
                                ttlSecondsAfterFinished=3))
        pods = self.wait_pods("life", 3, 0)
        for p in pods:
            self.kubelet.set_running(p)
        job = self.wait_phase("life", "Running")
        self.assertEqual([n["phase"] for n in job["status"]["nodes"]], ["Running"] * 3)
        self.assertEqual(self.condition(job, "Running")["status"], "True")
        old_uids = {p["metadata"]["uid"] for p in pods}
        # Rank 1 dies from a signal (retryable): the whole group restarts as attempt 1.
        self.kubelet.set_terminated(pods[1], 137)
        job = self.wait_phase("life", "Restarting")
        self.assertEqual((job["status"]["restarts"], job["status"]["attempt"]), (1, 1))
        self.assertIn("exit code 137", self.condition(job, "Restarting")["message"])
        new = self.wait_pods("life", 3, 1)
        self.assertFalse(old_uids & {p["metadata"]["uid"] for p in new}, "every pod recreated")
        for p in new:
            env = {e["name"]: e.get("value") for e in p["spec"]["containers"][0]["env"]}
            self.assertEqual(env["DDP3D_ATTEMPT"], "1")
        for p in new:
            self.kubelet.set_running(p)
        job = self.wait_phase("life", "Running")
        self.assertEqual(job["status"]["restarts"], 1)
        self.assertEqual(self.condition(job, "Restarting")["status"], "False")
        for p in new:
            self.kubelet.set_terminated(p, 0)
        job = self.wait_phase("life", "Succeeded")
        self.assertTrue(job["status"]["completionTime"])
        # cleanPodPolicy All: every pod goes; ttlSecondsAfterFinished 3: then the job itself.
        wait_for(lambda: not pods_of(self.kube, job), 20, "cleanPodPolicy All to delete pods")
        wait_for(lambda: self.job("life") is None, 30, "TTL to delete the TrainingJob")
        reasons = [e["reason"] for e in self.kube.list(Kube.core(NS, "events"))
                   if e["involvedObject"]["name"] == "life"]
        for r in ("Created", "AllNodesRunning", "NodeFailed", "AllNodesSucceeded"):
            self.assertIn(r, reasons)

    def test_backoff_limit_then_failed_with_reason(self):
        self.apply(training_job("backoff", nnodes=2, backoffLimit=1, cleanPodPolicy="None"))
        for attempt in (0, 1):
            pods = self.wait_pods("backoff", 2, attempt)
            for p in pods:
                self.kubelet.set_running(p)
            self.wait_phase("backoff", "Running")
            self.kubelet.set_terminated(pods[0], 143)
        job = self.wait_phase("backoff", "Failed")
        failed = self.condition(job, "Failed")
        self.assertEqual(failed["reason"], "BackoffLimitExceeded")
        self.assertIn("backoffLimit is 1", failed["message"])
        self.assertEqual(job["status"]["restarts"], 1)
        # Nothing further happens: no attempt 2, pods kept (cleanPodPolicy None).
        holds_for(lambda: [p["metadata"]["labels"]["ddp3d.io/attempt"]
                           for p in pods_of(self.kube, job)] == ["1", "1"], 1,
                  "the two pods of attempt 1, and no others")

    def test_permanent_exit_code_fails_after_the_grace_period(self):
        self.apply(training_job("permanent", nnodes=2, restartPolicy="ExitCode"))
        pods = self.wait_pods("permanent", 2, 0)
        for p in pods:
            self.kubelet.set_running(p)
        self.wait_phase("permanent", "Running")
        self.kubelet.set_terminated(pods[1], 3)
        # Rank 0 still runs: the verdict waits (10 s) for a retryable code from it, then comes
        # without any further event.
        start = time.time()
        job = self.wait_phase("permanent", "Failed")
        self.assertGreaterEqual(time.time() - start, 5)
        self.assertEqual(job["status"]["restarts"], 0)
        self.assertEqual(self.condition(job, "Failed")["reason"], "PermanentExitCode")
        # cleanPodPolicy Running (default): the still-running rank 0 is deleted, the failed
        # rank 1 is kept for its logs.
        wait_for(lambda: [p["metadata"]["name"] for p in pods_of(self.kube, job)]
                 == ["permanent-node-1"], 20, "running pod cleaned up")

    def test_killed_rank_reported_after_its_peer_still_restarts(self):
        # The race the grace period closes: the peer's exit 1 (broken collective) reaches the
        # operator before the killed rank's 137.
        self.apply(training_job("race", nnodes=2, restartPolicy="ExitCode"))
        pods = self.wait_pods("race", 2, 0)
        for p in pods:
            self.kubelet.set_running(p)
        self.wait_phase("race", "Running")
        self.kubelet.set_terminated(pods[1], 1)
        holds_for(lambda: self.phase("race") == "Running", 2, "phase Running during the grace")
        self.kubelet.set_terminated(pods[0], 137)
        job = self.wait_phase("race", "Restarting")
        self.assertEqual((job["status"]["restarts"], job["status"]["attempt"]), (1, 1))

    def test_long_name_gives_valid_names(self):
        name = "pointpillars-hv-secfpn-8xb6-160e-kitti-3d-car-" + "x" * 60
        self.assertGreater(len(name), 63)
        job = self.apply(training_job(name, nnodes=2))
        pods = wait_for(lambda: len(p := pods_of(self.kube, self.job(name))) == 2 and p, 30,
                        "pods of the long-named job")
        svc = wait_for(lambda: [s for s in self.kube.list(Kube.core(NS, "services"),
                                                          "ddp3d.io/job-name")
                                if s["metadata"]["ownerReferences"][0]["uid"]
                                == job["metadata"]["uid"]], 30, "its Service")[0]
        import re
        label = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
        for p in pods:
            n = p["metadata"]["name"]
            self.assertLessEqual(len(n), 63)
            self.assertRegex(n, label)
            self.assertEqual(p["spec"]["hostname"], n)
            self.assertEqual(p["spec"]["subdomain"], svc["metadata"]["name"])
            env = {e["name"]: e.get("value") for e in p["spec"]["containers"][0]["env"]}
            self.assertEqual(env["DDP3D_JOB"], name)
        self.assertLessEqual(len(svc["metadata"]["name"]), 63)
        self.assertRegex(svc["metadata"]["name"], r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
        for p in pods:
            self.kubelet.set_running(p)
        self.wait_phase(name, "Running")

    def test_reserved_env_in_template_fails_with_message(self):
        # The CRD cannot see inside the pass-through template; the operator checks it.
        obj = training_job("badenv", nnodes=2)
        obj["spec"]["template"] = {"spec": {"containers": [
            {"name": "worker", "env": [{"name": "NODE_RANK", "value": "5"}]}]}}
        self.apply(obj)
        job = self.wait_phase("badenv", "Failed")
        failed = self.condition(job, "Failed")
        self.assertEqual(failed["reason"], "InvalidSpec")
        self.assertIn('spec.template.spec.containers[0].env[0].name: "NODE_RANK" is reserved',
                      failed["message"])
        self.assertEqual(pods_of(self.kube, job), [])

    def suspend(self, name, suspend):
        self.kube.merge_patch(Kube.tj(NS, name), {"spec": {"runPolicy": {"suspend": suspend}}})

    def events_of(self, name, reason):
        return [e for e in self.kube.list(Kube.core(NS, "events"))
                if e["involvedObject"]["name"] == name and e["reason"] == reason]

    def test_suspend_and_resume(self):
        self.apply(training_job("pause", nnodes=2))
        pods = self.wait_pods("pause", 2, 0)
        # Not run yet: Running is listed, Unknown (the status is written before the pods).
        self.assertEqual(self.condition(self.job("pause"), "Running")["status"], "Unknown")
        self.suspend("pause", True)
        job = self.wait_phase("pause", "Suspended")
        running = self.condition(job, "Running")
        self.assertEqual((running["status"], running["reason"]), ("False", "Suspended"))
        wait_for(lambda: not pods_of(self.kube, job), 20, "pods deleted on suspend")
        self.suspend("pause", False)
        new = self.wait_pods("pause", 2, 1)
        self.assertFalse({p["metadata"]["uid"] for p in pods} & {p["metadata"]["uid"] for p in new})
        self.assertEqual(self.job("pause")["status"]["restarts"], 0)

        # Suspended again within 10 minutes: the same Event, count 2 (docs/operator.md).
        self.suspend("pause", True)
        job = self.wait_phase("pause", "Suspended")
        events = wait_for(lambda: (e := self.events_of("pause", "Suspended")) and
                          e[0].get("count") == 2 and e, 10, "the Suspended Event counted twice")
        self.assertEqual(len(events), 1, events)
        self.assertGreaterEqual(events[0]["lastTimestamp"], events[0]["firstTimestamp"])
        # Once that Event is gone, the next occurrence creates a new one.
        self.kube.delete(Kube.core(NS, "events", events[0]["metadata"]["name"]))
        wait_for(lambda: not pods_of(self.kube, job), 20, "pods deleted on suspend")
        self.suspend("pause", False)
        self.wait_pods("pause", 2, 2)
        self.suspend("pause", True)
        self.wait_phase("pause", "Suspended")
        again = wait_for(lambda: self.events_of("pause", "Suspended"), 10, "a new Suspended Event")
        self.assertEqual([e.get("count") for e in again], [1])
        self.assertNotEqual(again[0]["metadata"]["name"], events[0]["metadata"]["name"])

    # -- disruptions -------------------------------------------
    def assert_disruption_restart(self, name, n, attempt, disruptions):
        job = wait_for(lambda: (j := self.job(name)) and j["status"].get("attempt") == attempt
                       and j, 30, f"{name} attempt {attempt}")
        st = job["status"]
        self.assertEqual((st.get("restarts"), st.get("disruptions")), (0, disruptions), st)
        restarting = self.condition(job, "Restarting")
        self.assertEqual(restarting["reason"], "NodeDisrupted", restarting)
        self.assertIn("not counted against backoffLimit", restarting["message"])
        return self.wait_pods(name, n, attempt)

    def run_all(self, name, pods):
        for p in pods:
            self.kubelet.set_running(p)
        job = self.wait_phase(name, "Running")
        # The operator records each rank's pod uid once seen: that is how it tells a pod
        # that vanished from one not created yet.
        wait_for(lambda: all(n.get("uid") for n in self.job(name)["status"]["nodes"]), 10,
                 f"{name} node uids in status")
        return job

    def test_deleted_pod_starts_a_new_attempt_of_the_whole_gang(self):
        # backoffLimit 0: had the disruption been counted as a failure, the job would fail.
        self.apply(training_job("drained", nnodes=3, backoffLimit=0))
        pods = self.wait_pods("drained", 3, 0)
        self.run_all("drained", pods)
        # kubectl delete of a pod that never reached a node: it is gone at once.
        self.kube.delete(Kube.core(NS, "pods", pods[1]["metadata"]["name"]))
        new = self.assert_disruption_restart("drained", 3, 1, 1)
        self.assertFalse({p["metadata"]["uid"] for p in pods} & {p["metadata"]["uid"] for p in new},
                         "every pod recreated, none alone in the old attempt")
        for p in new:
            env = {e["name"]: e.get("value") for e in p["spec"]["containers"][0]["env"]}
            self.assertEqual(env["DDP3D_ATTEMPT"], "1")
        self.run_all("drained", new)
        # A deletion the pod takes time to finish (as on a node, with a grace period; here a
        # finalizer holds it): the operator acts on the deletionTimestamp and waits for the
        # name to come free before recreating that rank.
        held = new[0]["metadata"]["name"]
        self.kube.merge_patch(Kube.core(NS, "pods", held),
                              {"metadata": {"finalizers": ["test.ddp3d.io/hold"]}})
        self.kube.delete(Kube.core(NS, "pods", held))
        wait_for(lambda: self.job("drained")["status"].get("attempt") == 2, 30, "attempt 2")
        time.sleep(1)  # rank 0's old pod still holds its name: it is not recreated meanwhile
        names = [(p["metadata"]["name"], p["metadata"]["labels"]["ddp3d.io/attempt"])
                 for p in pods_of(self.kube, self.job("drained"))]
        self.assertIn((held, "1"), names)
        self.assertNotIn((held, "2"), names)
        self.kube.merge_patch(Kube.core(NS, "pods", held), {"metadata": {"finalizers": None}})
        newest = self.assert_disruption_restart("drained", 3, 2, 2)
        self.run_all("drained", newest)
        reasons = [e["reason"] for e in self.kube.list(Kube.core(NS, "events"))
                   if e["involvedObject"]["name"] == "drained"]
        self.assertGreaterEqual(reasons.count("NodeDisrupted"), 2, reasons)
        self.assertNotIn("NodeFailed", reasons)

    def test_evicted_pod_starts_a_new_attempt_of_the_whole_gang(self):
        self.apply(training_job("evicted", nnodes=2, restartPolicy="ExitCode", backoffLimit=0,
                                disruptionLimit=1))
        pods = self.wait_pods("evicted", 2, 0)
        self.run_all("evicted", pods)
        # What the eviction API, the scheduler's preemption or the taint manager write first.
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        self.kube.merge_patch(Kube.core(NS, "pods", pods[0]["metadata"]["name"], "status"),
                              {"status": {"conditions": [{
                                  "type": "DisruptionTarget", "status": "True",
                                  "reason": "EvictionByEvictionAPI",
                                  "message": "Eviction API: evicting", "lastTransitionTime": now}]}})
        new = self.assert_disruption_restart("evicted", 2, 1, 1)
        self.assertIn("EvictionByEvictionAPI", self.condition(self.job("evicted"),
                                                              "Restarting")["message"])
        self.run_all("evicted", new)
        # disruptionLimit 1 is used up: the next disruption fails the job, restarts still 0.
        self.kube.delete(Kube.core(NS, "pods", new[1]["metadata"]["name"]))
        job = self.wait_phase("evicted", "Failed")
        failed = self.condition(job, "Failed")
        self.assertEqual(failed["reason"], "DisruptionLimitExceeded", failed)
        self.assertIn("disruptionLimit is 1", failed["message"])
        self.assertEqual((job["status"]["restarts"], job["status"]["disruptions"]), (0, 1))

    # -- level-triggered clean-up --------------------------------
    def test_deadline_kill_is_retried_after_a_failed_delete(self):
        # An admission policy refuses to delete pods carrying a label: the operator's delete
        # of that pod fails until the label is removed.
        label = "test.ddp3d.io/undeletable"
        adm = "/apis/admissionregistration.k8s.io/v1"
        self.kube.create(f"{adm}/validatingadmissionpolicies", {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicy", "metadata": {"name": "undeletable-pods"},
            "spec": {"failurePolicy": "Fail",
                     "matchConstraints": {"resourceRules": [{
                         "apiGroups": [""], "apiVersions": ["v1"], "operations": ["DELETE"],
                         "resources": ["pods"]}]},
                     "validations": [{
                         "expression": f"!has(oldObject.metadata.labels) || "
                                       f"!('{label}' in oldObject.metadata.labels)",
                         "message": "this pod may not be deleted (test)"}]}})
        self.kube.create(f"{adm}/validatingadmissionpolicybindings", {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": "undeletable-pods"},
            "spec": {"policyName": "undeletable-pods", "validationActions": ["Deny"]}})
        try:
            self._deadline_kill_with_refused_delete(label)
        finally:
            self.kube.delete(f"{adm}/validatingadmissionpolicybindings/undeletable-pods")
            self.kube.delete(f"{adm}/validatingadmissionpolicies/undeletable-pods")

    def _deadline_kill_with_refused_delete(self, label):
        # The policy takes effect once the API server has loaded it: probe with a pod.
        probe = {"apiVersion": "v1", "kind": "Pod",
                 "metadata": {"name": "undeletable-probe", "labels": {label: "true"}},
                 "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
        self.kube.create(Kube.core(NS, "pods"), probe)

        def refused():
            try:
                self.kube.request("DELETE", Kube.core(NS, "pods", "undeletable-probe"))
            except ApiError as e:
                return e.code in (403, 422)
            # Deleted: the policy is not loaded yet; put the probe back and try again.
            self.kube.create(Kube.core(NS, "pods"), probe)
            return False
        wait_for(refused, 30, "the admission policy to refuse deletes")
        self.kube.merge_patch(Kube.core(NS, "pods", "undeletable-probe"),
                              {"metadata": {"labels": {label: None}}})
        self.kube.delete(Kube.core(NS, "pods", "undeletable-probe"))

        # cleanPodPolicy None: only the deadline kill deletes the pods.
        self.apply(training_job("held", nnodes=2, activeDeadlineSeconds=5, cleanPodPolicy="None"))
        pods = self.wait_pods("held", 2, 0)
        stuck = pods[0]["metadata"]["name"]
        self.kube.merge_patch(Kube.core(NS, "pods", stuck), {"metadata": {"labels": {label: "true"}}})
        for p in pods:
            self.kubelet.set_running(p)
        job = self.wait_phase("held", "Failed", timeout=30)
        self.assertEqual(self.condition(job, "Failed")["reason"], "DeadlineExceeded")
        wait_for(lambda: [p["metadata"]["name"] for p in pods_of(self.kube, job)] == [stuck], 20,
                 "the deletable pod to go")
        # Pass after pass, the operator asks again for the refused delete.
        wait_for(lambda: self.op.logs().count(f"DeletePod {stuck} failed") >= 2, 30,
                 "a second reconcile pass re-issuing the refused delete")
        self.assertEqual([p["metadata"]["name"] for p in pods_of(self.kube, job)], [stuck])
        # Once the delete can succeed, the next pass gets the pod deleted.
        self.kube.merge_patch(Kube.core(NS, "pods", stuck), {"metadata": {"labels": {label: None}}})
        wait_for(lambda: not pods_of(self.kube, job), 30, "the deadline kill to finish")
        self.assertEqual(self.phase("held"), "Failed")

    def test_endpoints_and_metrics(self):
        self.assertEqual(self.op.http(self.op.health_port, "/healthz")[0], 200)
        wait_for(self.op.ready, 30, "/readyz 200")
        wait_for(lambda: self.op.metric("ddp3d_operator_is_leader") == 1, 30, "leader gauge 1")
        self.assertIsNotNone(self.op.metric("ddp3d_operator_trainingjobs", 'phase="Running"'))
        self.assertIsNotNone(self.op.metric("ddp3d_operator_workqueue_depth"))
        self.assertIsNotNone(self.op.metric("ddp3d_operator_reconcile_duration_seconds_count"))
        self.assertGreater(self.op.metric("ddp3d_operator_actions_total", 'action="CreatePod"'), 0)
        # What the operator serves passes Prometheus' own linter.
        _, body = self.op.http(self.op.metrics_port, "/metrics")
        res = subprocess.run(["promtool", "check", "metrics"], input=body, capture_output=True,
                             text=True)
        self.assertEqual(res.returncode, 0, res.stdout + res.stderr)


class ResilienceTest(OperatorSuite):
    # Without leader election: a leader that cannot renew its Lease while the API server is
    # down must stop (and is restarted by its Deployment); here the point is that one
    # process rides out the outage and its watches resume.
    leader_elect = False
    def assert_no_duplicates_or_orphans(self, name, n, attempt):
        job = self.job(name)
        pods = [p for p in self.kube.list(Kube.core(NS, "pods"), "ddp3d.io/job-name")]
        uids = {j["metadata"]["uid"] for j in self.kube.list(Kube.tj(NS))}
        orphans = [p["metadata"]["name"] for p in pods
                   if not any(r["uid"] in uids for r in p["metadata"].get("ownerReferences", []))]
        self.assertEqual(orphans, [])
        mine = pods_of(self.kube, job)
        ranks = [p["metadata"]["labels"]["ddp3d.io/node-rank"] for p in mine]
        self.assertEqual(sorted(ranks, key=int), [str(r) for r in range(n)], "one pod per rank")
        self.assertEqual({p["metadata"]["labels"]["ddp3d.io/attempt"] for p in mine}, {str(attempt)})
        svcs = self.kube.list(Kube.core(NS, "services"), f"ddp3d.io/job-name={name}")
        self.assertEqual(len(svcs), 1)

    def test_operator_kill_and_apiserver_restart(self):
        n = 12
        self.apply(training_job("sturdy", nnodes=n))
        # SIGKILL as soon as the first pod exists: mid-way through creating the group.
        wait_for(lambda: self.kube.list(Kube.core(NS, "pods"), "ddp3d.io/job-name=sturdy"), 30,
                 "first pod", interval=0.02)
        self.op.kill(signal.SIGKILL)
        created = len(self.kube.list(Kube.core(NS, "pods"), "ddp3d.io/job-name=sturdy"))
        sys.stderr.write(f"\noperator killed with {created} of {n} pods created\n")
        type(self).op = self.start_operator("op-a2")
        pods = self.wait_pods("sturdy", n, 0)
        # The killed one may have created every pod already; the outage below is meant for
        # watches, so the new replica must have its caches synced (ready) first.
        wait_for(self.op.ready, 60, "the new replica to sync its caches")
        self.assert_no_duplicates_or_orphans("sturdy", n, 0)
        # The API server goes away and comes back; watches must resume.
        reconnects = self.op.logs().count("reconnecting in")
        self.cluster.cp.script("stop-apiserver")
        wait_for(lambda: self.op.logs().count("reconnecting in") > reconnects, 30,
                 "a watch to notice the outage")
        self.cluster.cp.script("start-apiserver")
        self.assertIsNone(self.op.proc.poll(), "operator survived the API server restart")
        for p in pods:
            self.kubelet.set_running(p)
        self.wait_phase("sturdy", "Running", timeout=60)
        self.kubelet.set_terminated(pods[5], 137)
        self.wait_pods("sturdy", n, 1, timeout=60)
        holds_for(lambda: self.assert_no_duplicates_or_orphans("sturdy", n, 1) or True, 1,
                  "no duplicate or orphaned pod")
        self.assertEqual(self.job("sturdy")["status"]["restarts"], 1)


class LeaderTest(OperatorSuite):
    replicas = 0

    def lease_holder(self):
        lease = self.kube.get(f"/apis/coordination.k8s.io/v1/namespaces/{SYSTEM_NS}"
                              "/leases/ddp3d-operator")
        return lease and lease["spec"].get("holderIdentity")

    def reporters(self, job):
        return {e.get("reportingInstance") for e in self.kube.list(Kube.core(NS, "events"))
                if e["involvedObject"]["name"] == job}

    def test_only_the_leader_acts_and_the_other_takes_over(self):
        a = self.start_operator("op-a")
        wait_for(lambda: self.lease_holder() == "op-a", 30, "op-a to lead")
        b = self.start_operator("op-b")
        wait_for(b.ready, 30, "standby ready")
        self.apply(training_job("led-1", nnodes=2))
        self.wait_pods("led-1", 2, 0)
        self.wait_phase("led-1", "Starting")
        self.assertEqual(self.reporters("led-1"), {"op-a"})
        self.assertEqual(a.metric("ddp3d_operator_is_leader"), 1)
        self.assertEqual(b.metric("ddp3d_operator_is_leader"), 0)
        self.assertIsNone(b.metric("ddp3d_operator_reconcile_total", 'result="success"'),
                          "the standby reconciled nothing")
        # The leader dies without releasing: the standby takes over once the Lease expires.
        a.kill(signal.SIGKILL)
        wait_for(lambda: self.lease_holder() == "op-b", 40, "op-b to take over")
        self.apply(training_job("led-2", nnodes=2))
        self.wait_pods("led-2", 2, 0)
        self.wait_phase("led-2", "Starting")
        self.assertEqual(self.reporters("led-2"), {"op-b"})
        wait_for(lambda: b.metric("ddp3d_operator_is_leader") == 1, 10, "op-b leader gauge")
        # Graceful stop: SIGTERM drains the queue, releases the Lease (empty holder, so a
        # successor need not wait for it to expire) and exits 0.
        t0 = time.monotonic()
        self.assertEqual(b.kill(signal.SIGTERM), 0)
        self.assertLess(time.monotonic() - t0, 10)
        self.assertIn(self.lease_holder(), ("", None))

    def lease(self):
        return self.kube.get(f"/apis/coordination.k8s.io/v1/namespaces/{SYSTEM_NS}"
                             "/leases/ddp3d-operator")

    @staticmethod
    def micro_time(text):
        return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(
            tzinfo=datetime.timezone.utc).timestamp()

    def test_a_leader_cut_off_from_the_api_server_stops_before_its_lease_expires(self):
        # op-s reaches the API server through a proxy that will go silent; op-w directly.
        # The chart's (and the operator's) timings: Lease 15 s, renew deadline 10 s.
        lease_duration, renew_deadline = 15, 10
        api_port = int(re.search(r"127\.0\.0\.1:(\d+)", self.kube.base).group(1))
        proxy = StallingProxy(api_port)
        self.addCleanup(proxy.close)
        proxied = proxy.kubeconfig(self.cluster.sa_kubeconfig,
                                   os.path.join(self.cluster.tmp, "proxied.kubeconfig"))
        s = self.start_operator("op-s", kubeconfig=proxied)
        wait_for(lambda: self.lease_holder() == "op-s", 40, "op-s to lead")
        wait_for(lambda: s.metric("ddp3d_operator_is_leader") == 1, 10, "op-s leader gauge")
        w = self.start_operator("op-w")
        wait_for(w.ready, 30, "standby ready")
        self.apply(training_job("cut-1", nnodes=2))
        self.wait_pods("cut-1", 2, 0)

        proxy.stall()
        code = s.proc.wait(timeout=lease_duration + 15)
        exited = time.time()
        # The last renewal that reached the server: nothing from op-s has passed since.
        lease = self.lease()["spec"]
        last_renew = self.micro_time(lease["renewTime"])
        self.assertEqual(lease["holderIdentity"], "op-s", "nobody took over before op-s quit")
        self.assertEqual(code, 1, "a lost Lease exits 1")
        logs = s.logs()
        self.assertIn("not renewed within the renew deadline", logs)
        self.assertIn("lost the leader Lease", logs)
        sys.stderr.write(f"\nop-s exited {exited - last_renew:.2f} s after its last renewal "
                         f"(renew deadline {renew_deadline} s, Lease {lease_duration} s)\n")
        # It stopped leading at the renew deadline (plus 2.5 s to shut down; it takes ~0.2 s),
        # well before the Lease could expire. Without a deadline on the renewals themselves
        # a renewal started at 9 s hangs for the 5 s request timeout: 14 s or more.
        self.assertLess(exited - last_renew, renew_deadline + 2.5)
        self.assertLess(exited - last_renew, lease_duration)

        wait_for(lambda: self.lease_holder() == "op-w", 40, "op-w to take over")
        taken = self.micro_time(self.lease()["spec"]["acquireTime"])
        sys.stderr.write(f"op-w took over {taken - last_renew:.2f} s after op-s's last renewal\n")
        # Only once the Lease had expired: op-w times it from when it saw the last renewal,
        # which is after op-s stamped renewTime (one machine, one clock; 50 ms for rounding).
        self.assertGreaterEqual(taken - last_renew, lease_duration - 0.05)
        self.assertGreater(taken, exited)
        self.apply(training_job("cut-2", nnodes=2))
        self.wait_pods("cut-2", 2, 0)
        self.wait_phase("cut-2", "Starting")
        self.assertEqual(self.reporters("cut-2"), {"op-w"})
        self.assertEqual(w.kill(signal.SIGTERM), 0)

    def test_sigterm_stops_in_order_and_joins_every_thread(self):
        op = self.start_operator("op-t")
        wait_for(lambda: self.lease_holder() == "op-t", 40, "op-t to lead")
        wait_for(op.ready, 30, "op-t ready")
        self.apply(training_job("term-1", nnodes=2))
        self.wait_pods("term-1", 2, 0)
        # The operator counts its threads once cpprest's pool is up and before it starts
        # anything of its own; after shutdown it counts again and exits 0 only if they match.
        before = int(wait_for(lambda: re.search(r"(\d+) threads before starting", op.logs()),
                              5, "the start-up thread count").group(1))
        # Servers, informers, the elector, the workers and the signal thread are running, so
        # a leaked one would show in the count at exit.
        self.assertGreaterEqual(op.threads(), before + 10)
        t0 = time.monotonic()
        self.assertEqual(op.kill(signal.SIGTERM), 0)
        self.assertLess(time.monotonic() - t0, 10)
        logs = op.logs()
        self.assertIn(f"stopped; every thread joined ({before} left", logs)
        steps = ["received SIGTERM", "stopping workers", "released lease", "stopping informers",
                 "stopping health server", "stopping metrics server", "every thread joined"]
        at = [logs.find(s) for s in steps]
        self.assertNotIn(-1, at, dict(zip(steps, at)))
        self.assertEqual(at, sorted(at), "shutdown order")
        self.assertIn(self.lease_holder(), ("", None))


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1] + sys.argv[1:], verbosity=2)
