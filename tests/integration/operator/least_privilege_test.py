"""The operator's RBAC is least privilege, proven from the requests it makes.

The test API server writes an audit log of every ServiceAccount request
(tests/testbin/control-plane.sh). Each suite runs the operator, as the chart's
ServiceAccount, through every path that talks to the API server (leader election, the
informers, the Service, NetworkPolicy, rendezvous Secrets and pods, status writes, events
and a repeated one (patched), a gang restart, cleanPodPolicy and ttlSecondsAfterFinished;
with Kueue's API installed, a queued job that the test admits as Kueue would, which then runs
and finishes) and then compares what it asked for with what the chart grants:

  ClusterScope    the default install (ClusterRole): no request refused, and every granted
                  verb used, but for trainingjobs/finalizers, which is no request of its own
                  and is shown needed by taking it away (OwnerReferencesPermissionEnforcement
                  then refuses the pods).
  NamespaceScope  rbac.scope=namespace with watchNamespaces=[ml]: Roles only in ml and the
                  release namespace; the operator asks for nothing outside them, leaves a
                  job in another namespace alone, and cannot read it.
"""

import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import kueue_crds  # noqa: E402
from harness import (NS, RELEASE, SERVICE_ACCOUNT, SYSTEM_NS, Cluster, Kubelet, Kube,  # noqa: E402
                     Operator, OperatorLogOnFailure, holds_for, pods_of, training_job,
                     wait_for)

OPERATOR_USER = f"system:serviceaccount:{SYSTEM_NS}:{SERVICE_ACCOUNT}"
ROLE = f"{RELEASE}-operator"
# Granted for an admission check, never requested: (group, resource, verb).
ADMISSION_ONLY = {("ddp3d.io", "trainingjobs/finalizers", "update")}
KUEUE = "/apis/kueue.x-k8s.io/v1beta2"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"


def grants(role):
    """(group, resource, verb) for every rule of a Role or ClusterRole object."""
    out = set()
    for rule in role.get("rules", []):
        for g in rule.get("apiGroups", []):
            for r in rule.get("resources", []):
                for v in rule.get("verbs", []):
                    out.add((g, r, v))
    return out


def show(triples):
    return ", ".join(f"{v} {g + '/' if g else ''}{r}" for g, r, v in sorted(triples)) or "nothing"


class Scenario(OperatorLogOnFailure, unittest.TestCase):
    """Shared: the cluster, the operator, and one job driven through every API path."""
    helm_set = ()
    namespaces = (NS,)
    operator_args = ()
    kueue = False  # Kueue's CRDs in the API server before the operator starts

    @classmethod
    def setUpClass(cls):
        cls.cluster = Cluster(helm_set=cls.helm_set, namespaces=cls.namespaces).start()
        cls.kube = cls.cluster.kube
        if cls.kueue:
            kueue_crds.install(cls.cluster.cp)
        cls.kubelet = Kubelet(cls.kube)
        cls.op = Operator(cls.cluster, "op-a", extra=cls.operator_args)

    @classmethod
    def tearDownClass(cls):
        cls.op.stop()
        cls.cluster.stop()

    def job(self, name, ns=NS):
        return self.kube.get(Kube.tj(ns, name))

    def wait_phase(self, name, phase, timeout=30):
        return wait_for(lambda: (j := self.job(name)) and j.get("status", {}).get("phase") == phase
                        and j, timeout, f"{name} phase {phase}")

    def wait_pods(self, name, n, attempt, timeout=30):
        def ready():
            pods = [p for p in pods_of(self.kube, self.job(name))
                    if not p["metadata"].get("deletionTimestamp")]
            ok = len(pods) == n and all(
                p["metadata"]["labels"]["ddp3d.io/attempt"] == str(attempt) for p in pods)
            return ok and pods
        return wait_for(ready, timeout, f"{n} pods of {name} in attempt {attempt}")

    def drive_a_job_through_every_path(self, name):
        """Created -> Running -> a rank fails -> gang restart -> Succeeded -> pods cleaned
        -> the job deleted by its TTL."""
        job = training_job(name, nnodes=2, backoffLimit=2, cleanPodPolicy="All",
                           ttlSecondsAfterFinished=1)
        job["spec"]["network"] = {"policy": True}  # the NetworkPolicy; the Secrets are default
        self.kube.create(Kube.tj(NS), job)
        pods = self.wait_pods(name, 2, 0)
        for p in pods:
            self.kubelet.set_running(p)
        self.wait_phase(name, "Running")
        self.kubelet.set_terminated(pods[1], 137)
        for p in self.wait_pods(name, 2, 1):
            self.kubelet.set_running(p)
        self.wait_phase(name, "Running")
        for p in self.wait_pods(name, 2, 1):
            self.kubelet.set_terminated(p, 0)
        wait_for(lambda: self.job(name) is None, 30, f"the TTL to delete {name}")

    def drive_a_repeated_event(self, name):
        """Suspended twice within the Event window: the second Suspended Event is a PATCH of
        the first (count 2), not a new object."""
        job = training_job(name, nnodes=1, suspend=True)
        self.kube.create(Kube.tj(NS), job)
        self.wait_phase(name, "Suspended")
        for suspend in (False, True):
            self.kube.merge_patch(Kube.tj(NS, name), {"spec": {"runPolicy": {"suspend": suspend}}})
            wait_for(lambda: (self.job(name)["status"]["phase"] == "Suspended") == suspend, 30,
                     f"{name} {'suspended' if suspend else 'resumed'}")
        wait_for(lambda: any(e["involvedObject"]["name"] == name and e["reason"] == "Suspended"
                             and e.get("count") == 2
                             for e in self.kube.list(Kube.core(NS, "events"))),
                 10, f"{name}'s Suspended Event counted twice")
        self.kube.delete(Kube.tj(NS, name))

    def workload(self, job_name):
        return self.kube.get(f"{KUEUE}/namespaces/{NS}/workloads/{job_name}-workload")

    def drive_a_queued_job(self, name):
        """Kueue's path: a job labelled with a queue and naming a PriorityClass gets a Workload
        and no pod; admitted (the test writes the admission as Kueue would, with a
        ResourceFlavor) it runs, reports PodsReady, succeeds, marks the Workload Finished and
        lets go of it (finalizer removed)."""
        self.kube.create("/apis/scheduling.k8s.io/v1/priorityclasses", {
            "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
            "metadata": {"name": "lp-high"}, "value": 1000})
        self.kube.create(f"{KUEUE}/resourceflavors", {
            "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
            "metadata": {"name": "lp-flavor"}, "spec": {"nodeLabels": {"pool": "training"}}})
        job = training_job(name, nnodes=2, gpus=0, cleanPodPolicy="All")
        job["metadata"]["labels"] = {QUEUE_LABEL: "lq"}
        job["spec"]["template"] = {"spec": {"priorityClassName": "lp-high"}}
        self.kube.create(Kube.tj(NS), job)
        wl = wait_for(lambda: self.workload(name), 30, f"the Workload of {name}")
        self.wait_phase(name, "Queued")
        self.assertEqual(wl["spec"]["priority"], 1000)
        self.assertFalse(pods_of(self.kube, self.job(name)))
        # Admitted, as Kueue's scheduler writes it.
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        wl["status"] = {
            "admission": {"clusterQueue": "cq", "podSetAssignments": [{
                "name": "ranks", "count": 2, "flavors": {"cpu": "lp-flavor"},
                "resourceUsage": {"cpu": "2"}}]},
            "conditions": [
                {"type": t, "status": "True", "reason": t, "message": "the test admits it",
                 "lastTransitionTime": now} for t in ("QuotaReserved", "Admitted")]}
        self.kube.request("PUT", f"{KUEUE}/namespaces/{NS}/workloads/{name}-workload/status", wl)
        pods = self.wait_pods(name, 2, 0)
        self.assertEqual(pods[0]["spec"].get("nodeSelector", {}).get("pool"), "training")
        for p in pods:
            self.kubelet.set_running(p)
        self.wait_phase(name, "Running")
        for p in pods:
            self.kubelet.set_terminated(p, 0)
        self.wait_phase(name, "Succeeded")
        wait_for(lambda: "kueue.x-k8s.io/resource-in-use" not in
                 (self.workload(name)["metadata"].get("finalizers") or []),
                 30, f"the Workload of {name} let go")

    def requests(self):
        """The operator's requests for API resources. Discovery (GET /apis/scheduling.k8s.io,
        which finds the PodGroup API, and GET /apis/kueue.x-k8s.io) names no resource: every authenticated user may read
        it (system:discovery), so the chart grants nothing for it."""
        return [r for r in self.cluster.requests_by(OPERATOR_USER)
                if r["resource"] or not r["uri"].startswith("/apis")]

    def used(self):
        return {(r["group"], r["resource"], r["verb"]) for r in self.requests()}

    def assert_nothing_refused(self):
        refused = [r for r in self.requests() if r["code"] in (401, 403)]
        self.assertFalse(refused, "the API server refused the operator:\n" + "\n".join(
            f"{r['code']} {r['verb']} {r['uri']}" for r in refused))


class ClusterScope(Scenario):
    kueue = True

    def test_the_role_grants_exactly_the_requests_the_operator_makes(self):
        self.drive_a_job_through_every_path("lp")
        self.drive_a_repeated_event("lp-repeat")
        self.drive_a_queued_job("lp-queued")
        # The leader renews its Lease every 2 s.
        wait_for(lambda: ("coordination.k8s.io", "leases", "update") in self.used(), 20,
                 "a Lease renewal")
        self.assert_nothing_refused()
        cluster_role = self.kube.get(f"/apis/rbac.authorization.k8s.io/v1/clusterroles/{ROLE}")
        lease_role = self.kube.get("/apis/rbac.authorization.k8s.io/v1/namespaces/"
                                   f"{SYSTEM_NS}/roles/{ROLE}-leader-election")
        granted = grants(cluster_role) | grants(lease_role)
        used = self.used()
        print(f"operator requests: {show(used)}", file=sys.stderr)
        self.assertEqual(used - granted, set(), f"used but not granted: {show(used - granted)}")
        self.assertEqual(granted - used - ADMISSION_ONLY, set(),
                         f"granted but never requested: {show(granted - used - ADMISSION_ONLY)}")
        # Leases only in the release namespace; PriorityClasses are cluster-scoped; everything
        # else in the job's.
        for r in self.requests():
            want = {"leases": SYSTEM_NS, "priorityclasses": ""}.get(r["resource"], NS)
            if r["verb"] not in ("list", "watch") or r["resource"] == "leases":
                self.assertEqual(r["namespace"], want, r["uri"])

    def test_zz_blocking_owner_deletion_needs_the_finalizers_rule(self):
        # Runs last (its name sorts last): it takes the rule away, then puts it back.
        path = f"/apis/rbac.authorization.k8s.io/v1/clusterroles/{ROLE}"
        role = self.kube.get(path)
        original = [dict(rule) for rule in role["rules"]]
        role["rules"] = [r for r in original if r["resources"] != ["trainingjobs/finalizers"]]
        self.assertEqual(len(role["rules"]), len(original) - 1)
        self.kube.request("PUT", path, role)
        try:
            before = len(self.requests())
            self.kube.create(Kube.tj(NS), training_job("blocked", nnodes=1))

            def refused_pod():
                return [r for r in self.requests()[before:]
                        if r["resource"] == "pods" and r["verb"] == "create" and r["code"] == 403]
            refused = wait_for(refused_pod, 30, "the pod create to be refused")
            print(f"without trainingjobs/finalizers: {refused[0]['code']} create pods",
                  file=sys.stderr)
            self.assertFalse(pods_of(self.kube, self.job("blocked")))
        finally:
            role = self.kube.get(path)
            role["rules"] = original
            self.kube.request("PUT", path, role)
        # With the rule back, the retried reconcile creates the pod.
        self.wait_pods("blocked", 1, 0, timeout=60)


class NamespaceScope(Scenario):
    helm_set = ("rbac.scope=namespace", f"watchNamespaces={{{NS}}}")
    namespaces = (NS, "other")
    # What the chart passes in this scope: it grants nothing cluster-wide, Nodes included.
    operator_args = ("--namespace", NS, "--watch-nodes=false")

    def test_access_only_in_the_watched_namespace(self):
        rbac = "/apis/rbac.authorization.k8s.io/v1"
        self.assertIsNone(self.kube.get(f"{rbac}/clusterroles/{ROLE}"))
        self.assertIsNone(self.kube.get(f"{rbac}/clusterrolebindings/{ROLE}"))
        self.assertIsNone(self.kube.get(f"{rbac}/namespaces/other/roles/{ROLE}"))
        role = self.kube.get(f"{rbac}/namespaces/{NS}/roles/{ROLE}")
        self.assertTrue(role)

        # A job the operator may not see, beside one it runs.
        stray = training_job("stray", nnodes=1)
        stray["metadata"]["namespace"] = "other"
        self.kube.create(Kube.tj("other"), stray)
        self.drive_a_job_through_every_path("lp")
        self.drive_a_repeated_event("lp-repeat")
        holds_for(lambda: not self.kube.list(Kube.core("other", "pods")) and
                  not (self.job("stray", "other") or {}).get("status"), 2,
                  "the job in an unwatched namespace left alone")

        self.assert_nothing_refused()
        outside = [r for r in self.requests() if r["namespace"] not in (NS, SYSTEM_NS)]
        self.assertFalse(outside, "requests outside the watched and release namespaces:\n" +
                         "\n".join(f"{r['verb']} {r['uri']}" for r in outside))
        granted = grants(role)
        used = {(g, r, v) for g, r, v in self.used() if r != "leases"}
        self.assertEqual(granted - used - ADMISSION_ONLY, set(),
                         f"granted but never requested: {show(granted - used - ADMISSION_ONLY)}")

        # What the ServiceAccount may do, as the API server decides it.
        def can_i(verb, resource, ns):
            review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
                      "spec": {"user": OPERATOR_USER,
                               "groups": ["system:serviceaccounts",
                                          f"system:serviceaccounts:{SYSTEM_NS}",
                                          "system:authenticated"],
                               "resourceAttributes": {"verb": verb, "resource": resource,
                                                      "namespace": ns}}}
            res = self.kube.create("/apis/authorization.k8s.io/v1/subjectaccessreviews", review)
            return res["status"].get("allowed", False)
        self.assertTrue(can_i("create", "pods", NS))
        self.assertFalse(can_i("list", "pods", "other"))
        self.assertFalse(can_i("list", "pods", ""))  # all namespaces
        self.assertFalse(can_i("create", "pods", "other"))


if __name__ == "__main__":
    unittest.main(verbosity=2)
