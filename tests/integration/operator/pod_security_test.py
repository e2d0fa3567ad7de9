"""The closed pod template and Pod Security "restricted" (docs/security.md), against a real
kube-apiserver with its PodSecurity admission plugin (on by default) and the operator
running as the chart's ServiceAccount with --trusted-namespaces=trusted.

Proves: in a namespace labelled pod-security.kubernetes.io/enforce=restricted the API server
admits the pods the operator creates (and refuses a privileged pod there, so the label is
enforced); every refused template field is refused with its path named, by the CRD's CEL
rules at admission or by the operator (Failed condition and Warning Event, no pods);
spec.podSecurity: Trusted passes its template as written in a trusted namespace only.
"""

import copy
import json
import os
import re
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (CONFIG, Cluster, Kube, Operator, OperatorLogOnFailure,  # noqa: E402
                     wait_for)
from kube_rest import ApiError  # noqa: E402

RESTRICTED_NS = "restricted"
TRUSTED_NS = "trusted"
POD = "spec.template.spec"


def job(name, ns, pod_spec=None, pod_security=None):
    spec = {"nnodes": 2, "gpusPerNode": 1, "config": CONFIG, "image": "ddp3d/worker:test"}
    if pod_spec is not None:
        spec["template"] = {"spec": pod_spec}
    if pod_security:
        spec["podSecurity"] = pod_security
    return {"apiVersion": "ddp3d.io/v1alpha1", "kind": "TrainingJob",
            "metadata": {"name": name, "namespace": ns}, "spec": spec}


def container(**fields):
    return dict({"name": "worker"}, **fields)


def sc(**fields):
    return {"containers": [container(securityContext=fields)]}


# (case, spec.template.spec, path the refusal names). One row per refused field of
# docs/security.md; the first group is refused by the CRD's CEL rules at admission.
ADMISSION = [
    ("hostNetwork", {"hostNetwork": True}, f"{POD}.hostNetwork"),
    ("hostPID", {"hostPID": True}, f"{POD}.hostPID"),
    ("hostIPC", {"hostIPC": True}, f"{POD}.hostIPC"),
    ("nodeName", {"nodeName": "node-1"}, f"{POD}.nodeName"),
    ("pod runAsUser 0", {"securityContext": {"runAsUser": 0}}, f"{POD}.securityContext.runAsUser"),
    ("pod runAsNonRoot false", {"securityContext": {"runAsNonRoot": False}},
     f"{POD}.securityContext.runAsNonRoot"),
    ("pod seccomp Unconfined", {"securityContext": {"seccompProfile": {"type": "Unconfined"}}},
     f"{POD}.securityContext.seccompProfile.type"),
    ("sysctls", {"securityContext": {"sysctls": [{"name": "net.core.somaxconn", "value": "1"}]}},
     f"{POD}.securityContext.sysctls"),
    ("hostPath volume", {"volumes": [{"name": "tmp", "emptyDir": {}},
                                     {"name": "root", "hostPath": {"path": "/"}}]},
     f"{POD}.volumes[1].hostPath"),
    ("privileged", sc(privileged=True), f"{POD}.containers[0].securityContext.privileged"),
    ("allowPrivilegeEscalation", sc(allowPrivilegeEscalation=True),
     f"{POD}.containers[0].securityContext.allowPrivilegeEscalation"),
    ("added capability", {"containers": [container(), container(
        name="sidecar", securityContext={"capabilities": {"add": ["NET_ADMIN"]}})]},
     f"{POD}.containers[1].securityContext.capabilities.add"),
    ("container runAsUser 0", sc(runAsUser=0), f"{POD}.containers[0].securityContext.runAsUser"),
    ("container runAsNonRoot false", sc(runAsNonRoot=False),
     f"{POD}.containers[0].securityContext.runAsNonRoot"),
    ("container seccomp Unconfined", sc(seccompProfile={"type": "Unconfined"}),
     f"{POD}.containers[0].securityContext.seccompProfile.type"),
    ("procMount", sc(procMount="Unmasked"), f"{POD}.containers[0].securityContext.procMount"),
    ("hostPort", {"containers": [container(ports=[{"containerPort": 80, "hostPort": 80}])]},
     f"{POD}.containers[0].ports[].hostPort"),
    ("init container privileged",
     {"initContainers": [{"name": "init", "securityContext": {"privileged": True}}]},
     f"{POD}.initContainers[0].securityContext.privileged"),
]

# Refused by the operator: what needs its configuration or what CEL cannot enumerate.
RECONCILER = [
    ("serviceAccountName", {"serviceAccountName": "admin"}, f"{POD}.serviceAccountName"),
    ("serviceAccount", {"serviceAccount": "admin"}, f"{POD}.serviceAccount"),
    ("nfs volume", {"volumes": [{"name": "n", "nfs": {"server": "s", "path": "/"}}]},
     f"{POD}.volumes[0].nfs"),
    ("appArmor Unconfined", {"securityContext": {"appArmorProfile": {"type": "Unconfined"}}},
     f"{POD}.securityContext.appArmorProfile.type"),
    ("SELinux user", {"securityContext": {"seLinuxOptions": {"user": "system_u"}}},
     f"{POD}.securityContext.seLinuxOptions.user"),
    ("windows hostProcess", {"securityContext": {"windowsOptions": {"hostProcess": True}}},
     f"{POD}.securityContext.windowsOptions.hostProcess"),
]


class PodSecurityTest(OperatorLogOnFailure, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.cluster = Cluster().start()
        cls.kube = cls.cluster.kube
        cp = cls.cluster.cp
        for ns in (RESTRICTED_NS, TRUSTED_NS):
            cp.script("create-namespace", ns)
        cp.kubectl("label", "namespace", RESTRICTED_NS,
                   "pod-security.kubernetes.io/enforce=restricted",
                   "pod-security.kubernetes.io/enforce-version=latest", check=True)
        cls.op = Operator(cls.cluster, "op-a", extra=["--trusted-namespaces", TRUSTED_NS])

    @classmethod
    def tearDownClass(cls):
        cls.op.stop()
        cls.cluster.stop()

    # -- helpers ---------------------------------------------------------------
    def pods(self, ns, name):
        return self.kube.list(Kube.core(ns, "pods"), f"ddp3d.io/job-name={name}")

    def wait_pods(self, ns, name, n=2):
        return wait_for(lambda: len(p := self.pods(ns, name)) == n and p, 30,
                        f"{n} pods of {ns}/{name}")

    def wait_failed(self, ns, name):
        def failed():
            j = self.kube.get(Kube.tj(ns, name))
            return j and j.get("status", {}).get("phase") == "Failed" and j
        j = wait_for(failed, 30, f"{ns}/{name} Failed")
        return next(c for c in j["status"]["conditions"] if c["type"] == "Failed")

    def events(self, ns, name):
        return [e for e in self.kube.list(Kube.core(ns, "events"))
                if e["involvedObject"]["name"] == name]

    # -- tests -----------------------------------------------------------------
    def test_restricted_namespace_admits_the_operators_pods(self):
        # The label is enforced: a privileged pod is refused by PodSecurity admission.
        bad = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bad"},
               "spec": {"containers": [{"name": "c", "image": "x",
                                        "securityContext": {"privileged": True}}]}}
        with self.assertRaises(ApiError) as e:
            self.kube.create(Kube.core(RESTRICTED_NS, "pods"), bad)
        self.assertEqual(e.exception.code, 403)
        self.assertIn('violates PodSecurity "restricted:latest"',
                      json.loads(e.exception.body)["message"])
        # A template with volumes, resources and a sidecar, all restricted-compatible.
        template = {"volumes": [{"name": "cfg", "configMap": {"name": "cfg"}}],
                    "containers": [container(resources={"limits": {"memory": "1Gi"}},
                                             volumeMounts=[{"name": "cfg", "mountPath": "/c"}]),
                                   container(name="sidecar", image="busybox")]}
        self.kube.create(Kube.tj(RESTRICTED_NS), job("confined", RESTRICTED_NS, template))
        pods = self.wait_pods(RESTRICTED_NS, "confined")
        for p in pods:
            spec = p["spec"]
            self.assertIs(spec["automountServiceAccountToken"], False)
            self.assertIs(spec["securityContext"]["runAsNonRoot"], True)
            self.assertEqual(spec["securityContext"]["seccompProfile"], {"type": "RuntimeDefault"})
            for c in spec["containers"]:
                self.assertIs(c["securityContext"]["allowPrivilegeEscalation"], False)
                self.assertEqual(c["securityContext"]["capabilities"]["drop"], ["ALL"])
            # No token mounted; /dev/shm stays a memory-backed emptyDir.
            mounts = [m["mountPath"] for m in spec["containers"][0]["volumeMounts"]]
            self.assertNotIn("/var/run/secrets/kubernetes.io/serviceaccount", mounts)
            self.assertIn("/dev/shm", mounts)
            self.assertIn({"name": "ddp3d-shm", "emptyDir": {"medium": "Memory"}}, spec["volumes"])

    def test_every_admission_refused_field_is_named_by_the_api_server(self):
        for i, (case, pod_spec, path) in enumerate(ADMISSION):
            with self.subTest(case):
                with self.assertRaises(ApiError, msg=case) as e:
                    self.kube.create(Kube.tj(RESTRICTED_NS),
                                     job(f"refused-{i}", RESTRICTED_NS, pod_spec))
                self.assertEqual(e.exception.code, 422, e.exception.body)
                # CEL names a list element without its index (estimating the cost of
                # computing it exceeds the API server's budget).
                self.assertIn(re.sub(r"\[\d+\]", "[]", path), e.exception.body)
                self.assertIn("spec.podSecurity Restricted", e.exception.body)

    def test_every_reconciler_refused_field_fails_the_job_naming_it(self):
        for i, (_, pod_spec, _) in enumerate(RECONCILER):
            self.kube.create(Kube.tj(RESTRICTED_NS), job(f"refused-op-{i}", RESTRICTED_NS, pod_spec))
        for i, (case, _, path) in enumerate(RECONCILER):
            with self.subTest(case):
                name = f"refused-op-{i}"
                failed = self.wait_failed(RESTRICTED_NS, name)
                self.assertEqual(failed["reason"], "InvalidSpec")
                self.assertIn(path + ":", failed["message"])
                events = wait_for(lambda: [e for e in self.events(RESTRICTED_NS, name)
                                           if e["reason"] == "InvalidSpec"], 20, f"{name} event")
                self.assertEqual(events[0]["type"], "Warning")
                self.assertIn(path + ":", events[0]["message"])
                self.assertEqual(self.pods(RESTRICTED_NS, name), [])

    def test_trusted_templates_pass_only_in_trusted_namespaces(self):
        privileged = {"hostNetwork": True, "serviceAccountName": "default",
                      "containers": [container(securityContext={"privileged": True})]}
        self.kube.create(Kube.tj(TRUSTED_NS), job("infra", TRUSTED_NS, privileged, "Trusted"))
        for p in self.wait_pods(TRUSTED_NS, "infra"):
            self.assertIs(p["spec"]["hostNetwork"], True)
            self.assertIs(p["spec"]["containers"][0]["securityContext"]["privileged"], True)
        # CEL cannot see namespaces, so it admits Trusted anywhere; the operator refuses it.
        self.kube.create(Kube.tj(RESTRICTED_NS),
                         job("not-trusted", RESTRICTED_NS, copy.deepcopy(privileged), "Trusted"))
        failed = self.wait_failed(RESTRICTED_NS, "not-trusted")
        self.assertIn('spec.podSecurity: Trusted is allowed only in the operator\'s trusted '
                      'namespaces (--trusted-namespaces: "trusted"), not in "restricted"',
                      failed["message"])
        self.assertIn(f"{POD}.hostNetwork:", failed["message"])
        self.assertEqual(self.pods(RESTRICTED_NS, "not-trusted"), [])
        # Trust is opt-in: a Restricted job in the trusted namespace is still checked.
        with self.assertRaises(ApiError) as e:
            self.kube.create(Kube.tj(TRUSTED_NS), job("opt-in", TRUSTED_NS, privileged))
        self.assertIn(f"{POD}.hostNetwork", e.exception.body)


if __name__ == "__main__":
    unittest.main(verbosity=2)
