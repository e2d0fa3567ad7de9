"""Kueue on the test cluster (kueue.sh), checked on a running cluster by cluster_test.py
before it tears the cluster down: the real kube-apiserver calls the real Kueue webhooks,
and Kueue's scheduler admits Workloads within a ClusterQueue's quota, holds back the one
beyond it and admits it once quota is free. The last check plays the part the ddp3d
operator will play for its TrainingJobs (an external framework, no Kueue job reconciler):
after Kueue preempts an admitted Workload, the job's controller releases its quota the
way Kueue's jobframework does (reconciler.go, "6. handle eviction")."""

import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
NS = "kueue-check"
API = "kueue.x-k8s.io/v1beta2"


def workload(name, cpu, queue="lq", extra_requests=None):
    requests = {"cpu": cpu}
    requests.update(extra_requests or {})
    return {
        "apiVersion": API, "kind": "Workload",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "queueName": queue,
            "podSets": [{
                "name": "main", "count": 1,
                "template": {"spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "c", "image": "ddp3d.local/busybox:1",
                                    "resources": {"requests": requests}}],
                }},
            }],
        },
    }


def conditions(wl):
    return {c["type"]: c for c in wl.get("status", {}).get("conditions", [])}


class KueueChecks:
    """Mixed into cluster_test.ClusterTest: needs self.kubectl, self.wait, self.dir."""

    def kueue_sh(self, *args):
        t0 = time.monotonic()
        res = subprocess.run(["bash", os.path.join(HERE, "kueue.sh"), self.dir, *args],
                             capture_output=True, text=True)
        return res, time.monotonic() - t0

    def get_wl(self, name):
        return json.loads(self.kubectl("-n", NS, "get", f"workloads.{API.split('/')[1]}.kueue.x-k8s.io",
                                       name, "-o", "json").stdout)

    def wait_condition(self, name, ctype, status, reason=None, seconds=60):
        def probe():
            wl = self.get_wl(name)
            c = conditions(wl).get(ctype)
            ok = c is not None and c["status"] == status and (reason is None or c["reason"] == reason)
            return ok, (wl if ok else {k: (v["status"], v["reason"]) for k, v in conditions(wl).items()})
        return self.wait(f"Workload {name} {ctype}={status}{' ' + reason if reason else ''}",
                         seconds, probe)

    def check_kueue(self):
        # kueue.sh installs and starts Kueue, and says what it did.
        res, took = self.kueue_sh()
        self.assertEqual(res.returncode, 0, f"kueue.sh failed:\n{res.stderr[-4000:]}")
        print(f"kueue.sh: {took:.1f}s\n{res.stderr.strip()}", file=sys.stderr)
        with open(os.path.join(self.dir, "cluster.env")) as f:
            env = dict(line.rstrip("\n").split("=", 1) for line in f if "=" in line)
        self.assertTrue(env.get("KUEUE_PID"), "cluster.env has no KUEUE_PID")
        with open(os.path.join(self.dir, "kueue", "config.yaml")) as f:
            config = f.read()
        self.assertIn('externalFrameworks: ["TrainingJob.v1alpha1.ddp3d.io"]', config)
        self.assertIn("manageJobsWithoutQueueName: false", config)
        self.assertNotIn("waitForPodsReady", config)
        # Twice is harmless: the same process, nothing reinstalled.
        again, took = self.kueue_sh()
        self.assertEqual(again.returncode, 0, again.stderr[-2000:])
        self.assertIn("already running", again.stderr)
        self.assertIn(f"pid {env['KUEUE_PID']}", again.stderr)
        print(f"kueue.sh again: {took:.1f}s", file=sys.stderr)

        # Kueue runs with its own identity and its own ClusterRole, not cluster-admin.
        binding = json.loads(self.kubectl("get", "clusterrolebinding", "kueue-manager-role", "-o", "json").stdout)
        self.assertEqual(binding["roleRef"]["name"], "kueue-manager-role")
        self.assertEqual([s["name"] for s in binding["subjects"]], ["system:kueue-controller-manager"])
        can = self.kubectl("auth", "can-i", "create", "secrets", "-n", "default",
                           "--as", "system:kueue-controller-manager", check=False)
        self.assertEqual(can.stdout.strip(), "no")
        # The webhooks are URLs on the host with the cluster's CA.
        vwc = json.loads(self.kubectl("get", "validatingwebhookconfiguration",
                                      "kueue-validating-webhook-configuration", "-o", "json").stdout)
        urls = {w["name"]: w["clientConfig"]["url"] for w in vwc["webhooks"]}
        self.assertIn("vworkload.kb.io", urls)
        self.assertTrue(urls["vworkload.kb.io"].startswith("https://127.0.0.1:"), urls)
        self.assertNotIn("vpod.kb.io", urls)

        # Quota: one flavor, a ClusterQueue with 1 CPU, a LocalQueue in the namespace.
        self.kubectl("create", "namespace", NS)
        self.kubectl("apply", "-f", "-", stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": [
            {"apiVersion": API, "kind": "ResourceFlavor", "metadata": {"name": "default-flavor"}},
            {"apiVersion": API, "kind": "ClusterQueue", "metadata": {"name": "cq"},
             "spec": {"namespaceSelector": {},
                      "preemption": {"withinClusterQueue": "LowerPriority"},
                      "resourceGroups": [{
                 "coveredResources": ["cpu"],
                 "flavors": [{"name": "default-flavor",
                              "resources": [{"name": "cpu", "nominalQuota": "1"}]}]}]}},
            {"apiVersion": API, "kind": "LocalQueue", "metadata": {"name": "lq", "namespace": NS},
             "spec": {"clusterQueue": "cq"}},
        ]}))
        # The mutating webhook added Kueue's finalizer to the ClusterQueue.
        cq = json.loads(self.kubectl("get", "clusterqueue", "cq", "-o", "json").stdout)
        self.assertIn("kueue.x-k8s.io/resource-in-use", cq["metadata"].get("finalizers", []))
        self.wait("ClusterQueue cq Active", 60, lambda: (
            self.kubectl("get", "clusterqueue", "cq", "-o",
                         "jsonpath={.status.conditions[?(@.type=='Active')].status}").stdout == "True", None))
        self.wait("LocalQueue lq Active", 60, lambda: (
            self.kubectl("-n", NS, "get", "localqueue", "lq", "-o",
                         "jsonpath={.status.conditions[?(@.type=='Active')].status}").stdout == "True", None))

        # A Workload within quota is admitted, with the flavor named.
        t0 = time.monotonic()
        self.kubectl("create", "-f", "-", stdin=json.dumps(workload("wl-a", "1")))
        wl_a = self.wait_condition("wl-a", "Admitted", "True")
        print(f"wl-a admitted {time.monotonic() - t0:.1f}s after create", file=sys.stderr)
        self.assertEqual(conditions(wl_a)["QuotaReserved"]["status"], "True")
        adm = wl_a["status"]["admission"]
        self.assertEqual(adm["clusterQueue"], "cq")
        self.assertEqual(adm["podSetAssignments"][0]["name"], "main")
        self.assertEqual(adm["podSetAssignments"][0]["flavors"], {"cpu": "default-flavor"})
        self.assertEqual(adm["podSetAssignments"][0]["count"], 1)

        # Beyond quota: no admission, QuotaReserved=False with reason Pending, and it stays so.
        self.kubectl("create", "-f", "-", stdin=json.dumps(workload("wl-b", "1")))
        wl_b = self.wait_condition("wl-b", "QuotaReserved", "False", "Pending")
        print(f"wl-b pending: {conditions(wl_b)['QuotaReserved']['message']}", file=sys.stderr)
        time.sleep(3)
        wl_b = self.get_wl("wl-b")
        self.assertNotIn("admission", wl_b.get("status", {}))
        self.assertNotEqual(conditions(wl_b).get("Admitted", {}).get("status"), "True")

        # Deleting the first frees its quota: the second is admitted.
        t0 = time.monotonic()
        self.kubectl("-n", NS, "delete", "workload", "wl-a", "--wait=true", "--timeout=60s")
        wl_b = self.wait_condition("wl-b", "Admitted", "True")
        print(f"wl-b admitted {time.monotonic() - t0:.1f}s after wl-a's deletion", file=sys.stderr)
        self.assertEqual(wl_b["status"]["admission"]["podSetAssignments"][0]["flavors"], {"cpu": "default-flavor"})
        print("admitted Workload as the API returns it:\n" + json.dumps(wl_b, indent=1), file=sys.stderr)

        # The same object through v1beta1: kube-apiserver converts through Kueue's /convert.
        old = json.loads(self.kubectl("-n", NS, "get", "workloads.v1beta1.kueue.x-k8s.io", "wl-b",
                                      "-o", "json").stdout)
        self.assertEqual(old["apiVersion"], "kueue.x-k8s.io/v1beta1")
        self.assertEqual(old["status"]["admission"]["clusterQueue"], "cq")

        # The webhook rejects what only Kueue's validation forbids (the CRD schema allows it).
        bad = self.kubectl("create", "-f", "-", check=False,
                           stdin=json.dumps(workload("wl-bad", "1", extra_requests={"pods": "1"})))
        self.assertNotEqual(bad.returncode, 0, "a Workload requesting 'pods' was accepted")
        self.assertIn('admission webhook "vworkload.kb.io" denied the request', bad.stderr)
        self.assertIn("the key is reserved for internal kueue use", bad.stderr)

        self.check_eviction_release()

    def check_eviction_release(self):
        """Preemption, eviction and release, as an external framework's controller must
        handle them: Kueue evicts the admitted low-priority Workload for a higher-priority
        one (Evicted=True/Preempted) and keeps its status.admission, so the quota stays
        held and the preemptor waits; the job's controller stops the job, then clears the
        admission and sets QuotaReserved=False/Pending, Admitted=False/NoReservation,
        Requeued=True/Preempted (jobframework reconciler.go, "6. handle eviction":
        workload.UnsetQuotaReservationWithCondition, SetRequeuedCondition); then Kueue
        admits the preemptor and requeues the evicted one."""
        self.kubectl("apply", "-f", "-", stdin=json.dumps(
            {"apiVersion": API, "kind": "WorkloadPriorityClass", "metadata": {"name": "high"}, "value": 1000}))
        high = workload("wl-c", "1")
        high["spec"]["priorityClassRef"] = {"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass",
                                            "name": "high"}
        # The CRD requires spec.priority beside priorityClassRef; Kueue's scheduler reads it.
        high["spec"]["priority"] = 1000
        self.kubectl("create", "-f", "-", stdin=json.dumps(high))
        wl = self.wait_condition("wl-b", "Evicted", "True", "Preempted")
        self.assertEqual(conditions(wl)["Preempted"]["status"], "True")
        print(f"wl-b evicted: {conditions(wl)['Evicted']['message']}; "
              f"Preempted: {conditions(wl)['Preempted']['reason']}", file=sys.stderr)
        # Kueue leaves the quota reserved until the job's controller releases it.
        self.assertIn("admission", wl["status"])
        self.assertEqual(conditions(wl)["QuotaReserved"]["status"], "True")
        time.sleep(3)
        self.assertNotEqual(conditions(self.get_wl("wl-c")).get("QuotaReserved", {}).get("status"), "True",
                            "the preemptor was admitted before the victim's quota was released")

        wl = self.get_wl("wl-b")
        ev = conditions(wl)["Evicted"]
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        gen = wl["metadata"]["generation"]

        def cond(ctype, status, reason, message):
            return {"type": ctype, "status": status, "reason": reason, "message": message,
                    "lastTransitionTime": now, "observedGeneration": gen}
        keep = [c for c in wl["status"]["conditions"] if c["type"] not in ("QuotaReserved", "Admitted", "Requeued")]
        wl["status"]["conditions"] = keep + [
            cond("QuotaReserved", "False", "Pending", ev["message"]),
            cond("Admitted", "False", "NoReservation", "The workload has no reservation"),
            # True for Preempted and NodeFailures, False (with the eviction reason) otherwise.
            cond("Requeued", "True", ev["reason"], ev["message"]),
        ]
        del wl["status"]["admission"]
        # A plain update of the status subresource, resourceVersion included (on a
        # conflict, read again and redo): the webhook allows admission to be unset.
        t0 = time.monotonic()
        self.kubectl("replace", "--subresource=status", "-f", "-", stdin=json.dumps(wl))
        self.assertNotIn("admission", self.get_wl("wl-b")["status"])
        # The quota is free again: the preemptor is admitted; the victim waits in the queue.
        self.wait_condition("wl-c", "Admitted", "True")
        print(f"wl-c admitted {time.monotonic() - t0:.1f}s after wl-b's release", file=sys.stderr)
        wl = self.wait_condition("wl-b", "QuotaReserved", "False", "Pending")
        self.assertNotIn("admission", wl["status"])
        print("evicted, released and requeued Workload status:\n" + json.dumps(wl["status"], indent=1),
              file=sys.stderr)
