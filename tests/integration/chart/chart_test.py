"""The Helm chart with the real helm binary, promtool and a real kube-apiserver.

Proves: the chart's CRD is the same file as crds/; `helm lint` passes; `helm
template` renders the expected objects (monitoring objects only when enabled); the
alert rules and every dashboard query are valid PromQL (promtool) and use only the
documented ddp3d_* metric names; every alert fires as `promtool test rules` expects
(alerts_test.yaml); values.schema.json and the templates' checks reject bad values naming the
key, and every value is typed there and listed in README.md; the `helm test` hooks render with
their own least-privilege RBAC; `helm install` into a real API server creates the
objects; under RBAC the operator's ServiceAccount may do exactly what the
operator needs and nothing else (Kueue's rules included, by kueue.enabled and rbac.scope);
and `helm test` passes against the real operator binary running with the chart's flags and
ServiceAccount.
"""

import filecmp
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

import yaml  # python3-yaml (a dependency of clang-tidy, which tools/setup.sh installs)

SOURCE_DIR = os.environ.get(
    "DDP3D_SOURCE_DIR",
    os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..")))
sys.path.insert(0, os.path.join(SOURCE_DIR, "tests", "testbin"))
from controlplane import ControlPlane  # noqa: E402

BINARY_DIR = os.environ.get("DDP3D_BINARY_DIR", os.path.join(SOURCE_DIR, "build"))
OPERATOR = os.path.join(BINARY_DIR, "operator", "ddp3d-operator")
CHART = os.path.join(SOURCE_DIR, "charts", "ddp3d")
ALERTS_TEST = os.path.join(os.path.dirname(os.path.abspath(__file__)), "alerts_test.yaml")
RELEASE, NS = "ddp3d", "ddp3d-system"
OPERATOR_SA = f"system:serviceaccount:{NS}:ddp3d-operator"

# What the operator's ServiceAccount must be granted, exactly (resource -> verbs).
# (tests/integration/operator/least_privilege_test.py proves it from the audit log.)
EXPECTED_CLUSTER = {
    "trainingjobs.ddp3d.io": {"list", "watch", "delete"},
    "trainingjobs.ddp3d.io/status": {"update"},
    "trainingjobs.ddp3d.io/finalizers": {"update"},
    "pods": {"list", "watch", "create", "delete"},
    "services": {"list", "watch", "create"},
    "secrets": {"create"},
    "networkpolicies.networking.k8s.io": {"list", "watch", "create"},
    "podgroups.scheduling.k8s.io": {"create"},
    "nodes": {"list", "watch"},  # watchNodes, read-only, cluster-wide
    "events": {"create", "patch"},  # patch: a repeated Event's count
    # kueue.enabled: the jobs' Workloads; ResourceFlavors and PriorityClasses read-only.
    "workloads.kueue.x-k8s.io": {"list", "watch", "create", "patch"},
    "workloads.kueue.x-k8s.io/status": {"update"},
    "resourceflavors.kueue.x-k8s.io": {"list", "watch"},
    "priorityclasses.scheduling.k8s.io": {"get"},
}
EXPECTED_RELEASE_NS = {"leases.coordination.k8s.io": {"get", "create", "update"}}
# Granted to every authenticated user by the bootstrap policy, not by the chart.
BOOTSTRAP = {"selfsubjectreviews.authentication.k8s.io",
             "selfsubjectaccessreviews.authorization.k8s.io",
             "selfsubjectrulesreviews.authorization.k8s.io"}


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, **kw)


def helm_path():
    res = run(["bash", os.path.join(SOURCE_DIR, "tests", "testbin", "helm.sh")])
    if res.returncode != 0:
        raise RuntimeError(f"tests/testbin/helm.sh failed:\n{res.stderr}")
    return res.stdout.strip()


def documents(rendered):
    return [d for d in re.split(r"^---\s*$", rendered, flags=re.M) if re.search(r"^kind:", d, re.M)]


def kind_of(doc):
    return re.search(r"^kind:\s*(\S+)", doc, re.M).group(1)


def load_values():
    with open(os.path.join(CHART, "values.yaml")) as f:
        return yaml.safe_load(f)


def value_paths(values, prefix=""):
    """Every key path of values.yaml ("image.tag"), maps and leaves alike."""
    for key, value in values.items():
        path = prefix + key
        yield path
        if isinstance(value, dict):
            yield from value_paths(value, path + ".")


def readme_value_keys():
    """The keys named in the first column of README.md's values table. `a.b` / `.c` names
    a.c; `a`, `b` lists several."""
    with open(os.path.join(CHART, "README.md")) as f:
        text = f.read()
    table = text.split("\n## Values\n", 1)[1].split("\n## ", 1)[0]
    keys = set()
    for line in table.splitlines():
        if not line.startswith("| `"):
            continue
        last = None
        for token in re.findall(r"`([^`]+)`", line.split(" | ")[0]):
            key = token if not token.startswith(".") else last.rsplit(".", 1)[0] + token
            keys.add(key)
            last = key
    return keys


def documented_metrics():
    with open(os.path.join(CHART, "README.md")) as f:
        return set(re.findall(r"^\| `(ddp3d_[a-z_]+)` \|", f.read(), re.M))


def metric_names(expr):
    # A histogram's series carry _bucket/_sum/_count after the documented name.
    names = set(re.findall(r"\b(ddp3d_[a-z_]+)", expr))
    return {re.sub(r"_(bucket|sum|count)$", "", n) for n in names}


class ChartOfflineTest(unittest.TestCase):
    """Everything that needs no API server."""

    @classmethod
    def setUpClass(cls):
        cls.helm = helm_path()
        cls.tmp = tempfile.TemporaryDirectory(prefix="ddp3d-chart-")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def template(self, *sets, tests=False):
        """The rendered objects; `tests`: with the `helm test` hooks (install leaves them out)."""
        args = [self.helm, "template", RELEASE, CHART, "-n", NS] + ([] if tests else ["--skip-tests"])
        for s in sets:
            args += ["--set", s]
        res = run(args)
        self.assertEqual(res.returncode, 0, res.stderr)
        return res.stdout

    def template_fails(self, sets=(), values=None):
        """helm template's stderr, asserting that it failed."""
        args = [self.helm, "template", RELEASE, CHART, "-n", NS]
        for s in sets:
            args += ["--set", s]
        if values is not None:
            path = os.path.join(self.tmp.name, "bad-values.yaml")
            with open(path, "w") as f:
                f.write(values)
            args += ["-f", path]
        res = run(args)
        self.assertNotEqual(res.returncode, 0, f"rendered with {sets} {values}:\n{res.stdout[:2000]}")
        return res.stderr

    def test_chart_crd_is_identical_to_crds_dir(self):
        ours = os.path.join(CHART, "crds", "trainingjobs.ddp3d.io.yaml")
        self.assertTrue(filecmp.cmp(os.path.join(SOURCE_DIR, "crds", "trainingjobs.ddp3d.io.yaml"),
                                    ours, shallow=False),
                        "charts/ddp3d/crds/ differs from crds/: copy crds/trainingjobs.ddp3d.io.yaml")
        self.assertEqual(sorted(os.listdir(os.path.join(CHART, "crds"))),
                         sorted(os.listdir(os.path.join(SOURCE_DIR, "crds"))))

    def test_lint(self):
        for sets in ([], ["serviceMonitor.enabled=true,prometheusRule.enabled=true"]):
            args = [self.helm, "lint", "--strict", CHART] + [a for s in sets for a in ("--set", s)]
            res = run(args)
            self.assertEqual(res.returncode, 0, res.stdout + res.stderr)
            self.assertIn("0 chart(s) failed", res.stdout)

    def test_default_render(self):
        docs = documents(self.template())
        kinds = sorted(kind_of(d) for d in docs)
        self.assertEqual(kinds, sorted(["ServiceAccount", "ClusterRole", "ClusterRoleBinding",
                                        "Role", "RoleBinding", "Service", "Deployment",
                                        "ConfigMap"]))
        deployment = next(d for d in docs if kind_of(d) == "Deployment")
        for arg in ("- --leader-elect", "- --metrics-address=:8080", "- --health-address=:8081",
                    "- --allowed-service-accounts=default"):
            self.assertIn(arg, deployment)
        self.assertNotIn("--trusted-namespaces", deployment)  # no namespace trusted by default
        self.assertIn("path: /healthz", deployment)
        self.assertIn("path: /readyz", deployment)
        self.assertIn("serviceAccountName: ddp3d-operator", deployment)

    def test_namespace_scope_renders_roles_only_in_watched_namespaces(self):
        docs = documents(self.template("rbac.scope=namespace", "watchNamespaces={team-a,team-b}"))
        kinds = sorted(kind_of(d) for d in docs)
        self.assertNotIn("ClusterRole", kinds)
        self.assertNotIn("ClusterRoleBinding", kinds)
        roles = [d for d in docs if kind_of(d) == "Role"]
        spaces = sorted(re.search(r"^  namespace:\s*(\S+)", d, re.M).group(1) for d in roles)
        self.assertEqual(spaces, ["ddp3d-system", "team-a", "team-b"])  # + the leader Lease's
        bindings = [d for d in docs if kind_of(d) == "RoleBinding"]
        self.assertEqual(len(bindings), 3)
        for d in bindings:
            self.assertIn("namespace: ddp3d-system", d.split("subjects:")[1])
        deployment = next(d for d in docs if kind_of(d) == "Deployment")
        self.assertIn("- --namespace=team-a,team-b", deployment)

    def test_node_watch_follows_the_scope_unless_set(self):
        # Cluster scope: Nodes are read (the rule is in the ClusterRole) and watched.
        docs = documents(self.template())
        role = next(d for d in docs if kind_of(d) == "ClusterRole")
        self.assertIn("resources: [nodes]", role)
        deployment = next(d for d in docs if kind_of(d) == "Deployment")
        self.assertIn("- --watch-nodes=true", deployment)
        # Namespace scope grants nothing cluster-wide: no Node watch...
        ns_sets = ("rbac.scope=namespace", "watchNamespaces={team-a}")
        docs = documents(self.template(*ns_sets))
        self.assertNotIn("ClusterRole", [kind_of(d) for d in docs])
        self.assertIn("- --watch-nodes=false",
                      next(d for d in docs if kind_of(d) == "Deployment"))
        # ...unless asked for: then one ClusterRole that only reads Nodes.
        docs = documents(self.template(*ns_sets, "watchNodes=true"))
        roles = [d for d in docs if kind_of(d) == "ClusterRole"]
        self.assertEqual(len(roles), 1)
        self.assertIn("name: ddp3d-operator-nodes", roles[0])
        self.assertEqual(roles[0].split("rules:")[1].split(), ["-", "apiGroups:", '[""]',
                                                                "resources:", "[nodes]",
                                                                "verbs:", "[list,", "watch]"])
        self.assertIn("- --watch-nodes=true", next(d for d in docs if kind_of(d) == "Deployment"))
        # And off in cluster scope.
        docs = documents(self.template("watchNodes=false"))
        self.assertNotIn("resources: [nodes]", next(d for d in docs if kind_of(d) == "ClusterRole"))

    def test_kueue_follows_the_scope_unless_set(self):
        def rules(doc):
            return doc.split("rules:")[1]
        # Cluster scope: on, every Kueue rule in the one ClusterRole, no flag (the operator's
        # default is --kueue=true).
        docs = documents(self.template())
        role = rules(next(d for d in docs if kind_of(d) == "ClusterRole"))
        for rule in ("resources: [workloads]\n  verbs: [list, watch, create, patch]",
                     "resources: [workloads/status]\n  verbs: [update]",
                     "resources: [resourceflavors]\n  verbs: [list, watch]",
                     "resources: [priorityclasses]\n  verbs: [get]"):
            self.assertIn(rule, role)
        self.assertNotIn("--kueue", next(d for d in docs if kind_of(d) == "Deployment"))
        # Off: no Kueue rule at all, and the operator is told.
        docs = documents(self.template("kueue.enabled=false"))
        self.assertNotIn("kueue.x-k8s.io", rules(next(d for d in docs if kind_of(d) == "ClusterRole")))
        self.assertNotIn("priorityclasses", rules(next(d for d in docs if kind_of(d) == "ClusterRole")))
        self.assertIn("- --kueue=false", next(d for d in docs if kind_of(d) == "Deployment"))
        # Namespace scope grants nothing cluster-wide: off unless asked for...
        ns_sets = ("rbac.scope=namespace", "watchNamespaces={team-a,team-b}")
        docs = documents(self.template(*ns_sets))
        self.assertNotIn("kueue.x-k8s.io", "".join(docs))
        self.assertIn("- --kueue=false", next(d for d in docs if kind_of(d) == "Deployment"))
        # ...then the Workloads in each namespace's Role, and one ClusterRole that only reads
        # ResourceFlavors and PriorityClasses.
        docs = documents(self.template(*ns_sets, "kueue.enabled=true"))
        roles = [d for d in docs if kind_of(d) == "Role" and "leader-election" not in d]
        self.assertEqual(len(roles), 2)
        for role in roles:
            self.assertIn("resources: [workloads]", role)
            self.assertIn("resources: [workloads/status]", role)
            self.assertNotIn("resourceflavors", role)
        cluster_roles = [d for d in docs if kind_of(d) == "ClusterRole"]
        self.assertEqual(len(cluster_roles), 1)
        self.assertIn("name: ddp3d-operator-kueue", cluster_roles[0])
        self.assertEqual([l for l in rules(cluster_roles[0]).splitlines()
                          if l.strip() and not l.lstrip().startswith("#")],
                         ["- apiGroups: [kueue.x-k8s.io]", "  resources: [resourceflavors]",
                          "  verbs: [list, watch]", "- apiGroups: [scheduling.k8s.io]",
                          "  resources: [priorityclasses]", "  verbs: [get]"])
        binding = next(d for d in docs if kind_of(d) == "ClusterRoleBinding")
        self.assertIn("name: ddp3d-operator-kueue", binding.split("roleRef:")[1])
        self.assertNotIn("--kueue", next(d for d in docs if kind_of(d) == "Deployment"))

    def test_bad_rbac_scope_values_fail_naming_the_key(self):
        for sets, message in (
                (["rbac.scope=namespace"], "rbac.scope=namespace needs watchNamespaces"),
                (["rbac.scope=everywhere"],
                 '- rbac.scope: rbac.scope must be one of the following: "cluster", "namespace"')):
            with self.subTest(sets=sets):
                self.assertIn(message, self.template_fails(sets))

    # Bad values -> the line of helm's schema error that names the key.
    BAD_VALUES = [
        # unknown keys (typos), at the top and further down
        (["imagee.tag=x"], None, "- (root): Additional property imagee is not allowed"),
        (["image.tagg=x"], None, "- image: Additional property tagg is not allowed"),
        (["grafana.dashboards.enable=true"], None,
         "- grafana.dashboards: Additional property enable is not allowed"),
        (["leaderElection.name=x"], None, "- leaderElection: Additional property name is not allowed"),
        (["tests.imag.tag=x"], None, "- tests: Additional property imag is not allowed"),
        (["resources.request.cpu=1"], None, "- resources: Additional property request is not allowed"),
        # wrong types
        (["image.tag=5"], None, "- image.tag: Invalid type. Expected: string, given: integer"),
        (["replicaCount=two"], None, "- replicaCount: Invalid type. Expected: integer, given: string"),
        (["leaderElection.enabled=yes"], None,
         "- leaderElection.enabled: Invalid type. Expected: boolean, given: string"),
        (["watchNodes=maybe"], None, "- watchNodes: Invalid type. Expected: [boolean,null], given: string"),
        (["kueue.enabled=1"], None, "- kueue.enabled: Invalid type. Expected: [boolean,null], given: integer"),
        (["watchNamespaces=team-a"], None,
         "- watchNamespaces: Invalid type. Expected: array, given: string"),
        (["podLabels.team=1"], None, "- podLabels.team: Invalid type. Expected: string, given: integer"),
        (["serviceMonitor.interval=30"], None,
         "- serviceMonitor.interval: Invalid type. Expected: string, given: integer"),
        (["shutdownGraceSeconds=3s"], None,
         "- shutdownGraceSeconds: Invalid type. Expected: integer, given: string"),
        (["tests.timeoutSeconds=2m"], None,
         "- tests.timeoutSeconds: Invalid type. Expected: integer, given: string"),
        ([], "extraEnv: {NAME: value}\n", "- extraEnv: Invalid type. Expected: array, given: object"),
        ([], "extraEnv: [{name: A, value: 1}]\n",
         "- extraEnv.0.value: Invalid type. Expected: string, given: integer"),
        ([], "extraEnv: [{value: x}]\n", "- extraEnv.0: name is required"),
        # fixed sets
        (["rbac.scope=cluster-wide"], None, "- rbac.scope: rbac.scope must be one of the following"),
        (["logLevel=trace"], None, '- logLevel: logLevel must be one of the following: "info", "debug"'),
        (["image.pullPolicy=always"], None, "- image.pullPolicy: image.pullPolicy must be one of the following"),
        (["tests.image.pullPolicy=Sometimes"], None,
         "- tests.image.pullPolicy: tests.image.pullPolicy must be one of the following"),
        # ranges and forms
        (["metrics.port=0"], None, "- metrics.port: Must be greater than or equal to 1"),
        (["health.port=70000"], None, "- health.port: Must be less than or equal to 65535"),
        (["shutdownGraceSeconds=-1"], None, "- shutdownGraceSeconds: Must be greater than or equal to 0"),
        ([], 'watchNamespaces: ["team-a,team-b"]\n', "- watchNamespaces.0: Does not match pattern"),
        ([], "security: {trustedNamespaces: [Infra]}\n",
         "- security.trustedNamespaces.0: Does not match pattern"),
        (["extraArgs={workers=8}"], None, "- extraArgs.0: Does not match pattern '^-'"),
        (["leaderElection.id=My_Lease"], None, "- leaderElection.id: Does not match pattern"),
    ]

    def test_bad_values_fail_naming_the_key(self):
        """values.schema.json: each bad value fails `helm template` (and so `helm install`,
        ChartInstallTest) with a message that names the key."""
        for sets, values, message in self.BAD_VALUES:
            with self.subTest(sets=sets, values=values):
                stderr = self.template_fails(sets, values)
                self.assertIn("values don't meet the specifications of the schema", stderr)
                self.assertIn(message, stderr)

    def test_default_images_are_the_ones_the_documented_build_makes(self):
        """The chart's and the CPU examples' images are what tools/build_images.sh writes
        (docker.io/ddp3d/...:dev in its header), so `helm install` + `kubectl apply` work
        with the images docs/quickstart.md builds and loads, and no default names an image
        that nobody publishes."""
        with open(os.path.join(SOURCE_DIR, "tools", "build_images.sh")) as f:
            built = set(re.findall(r"^#\s+\S+\.tar\s+docker\.io/(\S+)$", f.read(), re.M))
        self.assertEqual(built, {"ddp3d/worker:dev", "ddp3d/operator:dev", "ddp3d/worker:dev-cuda"})
        deployment = next(d for d in documents(self.template()) if kind_of(d) == "Deployment")
        image = re.search(r"^\s+image: \"?([^\"\s]+)", deployment, re.M).group(1)
        self.assertIn(image, built)
        for example in ("cpu-demo/job.yaml", "cpu-demo/test-pod.yaml", "kueue/queued-job.yaml"):
            with open(os.path.join(SOURCE_DIR, "examples", example)) as f:
                images = re.findall(r"^\s*image:\s*(\S+)", f.read(), re.M)
            with self.subTest(example=example):
                self.assertTrue(images)
                self.assertLessEqual(set(images), built)

    def test_defaults_and_documented_forms_pass_the_schema(self):
        self.template()
        self.template("watchNodes=null", "kueue.enabled=true", "image.tag=1.2.3",
                      "leaderElection.id=ml-team.ddp3d", "logLevel=debug",
                      "extraEnv[0].name=A", "extraEnv[0].value=b", "podLabels.team=ml",
                      "resources.requests.cpu=1", "tests.enabled=false")
        res = run([self.helm, "template", RELEASE, CHART, "-n", NS, "-f", "-"], input=textwrap.dedent("""
            extraEnv:
            - name: HTTPS_PROXY
              valueFrom: {secretKeyRef: {name: proxy, key: url}}
            imagePullSecrets: [{name: regcred}]
            tolerations: [{key: dedicated, operator: Equal, value: ops, effect: NoSchedule}]
            affinity: {nodeAffinity: {}}
            """))
        self.assertEqual(res.returncode, 0, res.stderr)

    def test_template_checks_fail_naming_the_keys(self):
        """What the schema cannot say: relations between values."""
        for sets, message in (
                (["shutdownGraceSeconds=26"],
                 "shutdownGraceSeconds (26) must be at most terminationGracePeriodSeconds (30) minus 5"),
                (["terminationGracePeriodSeconds=7"],
                 "shutdownGraceSeconds (3) must be at most terminationGracePeriodSeconds (7) minus 5"),
                (["replicaCount=2", "leaderElection.enabled=false"],
                 "replicaCount=2 needs leaderElection.enabled=true"),
                (["podLabels.app\\.kubernetes\\.io/instance=x"],
                 "podLabels.app.kubernetes.io/instance: the chart sets this selector label itself")):
            with self.subTest(sets=sets):
                self.assertIn(message, self.template_fails(sets))
        self.template("shutdownGraceSeconds=25")  # the largest that fits 30 s
        self.template("shutdownGraceSeconds=60", "terminationGracePeriodSeconds=65")

    def test_every_value_has_a_schema_and_a_readme_row(self):
        with open(os.path.join(CHART, "values.schema.json")) as f:
            schema = json.load(f)
        self.assertEqual(schema["$schema"], "http://json-schema.org/draft-07/schema#")

        def check(values, node, prefix):
            self.assertFalse(node.get("additionalProperties", True) is not False
                             and "properties" in node, f"{prefix or '(root)'}: not closed")
            for key, value in values.items():
                sub = node.get("properties", {}).get(key)
                self.assertIsNotNone(sub, f"{prefix}{key} has no schema")
                self.assertIn("type", sub, f"{prefix}{key} has no type")
                if isinstance(value, dict) and "properties" in sub:
                    check(value, sub, f"{prefix}{key}.")
        check(load_values(), schema, "")

        documented = readme_value_keys()
        paths = set(value_paths(load_values()))
        leaves = {p for p in paths if not any(q.startswith(p + ".") for q in paths)}
        for path in sorted(leaves):
            # Listed itself, or a map it belongs to is (resources, grafana.dashboards.labels).
            parts = path.split(".")
            self.assertTrue({".".join(parts[:i]) for i in range(1, len(parts) + 1)} & documented,
                            f"{path} is not in README.md's values table")
        self.assertLessEqual(documented, paths, "README.md lists keys values.yaml does not have")

    def test_operator_values_become_flags_env_and_pod_fields(self):
        deployment = next(d for d in documents(self.template()) if kind_of(d) == "Deployment")
        self.assertIn("- --leader-election-id=ddp3d-operator", deployment)  # the Lease as before
        self.assertIn("- --shutdown-grace-seconds=3", deployment)
        self.assertIn("terminationGracePeriodSeconds: 30", deployment)
        self.assertIn('- name: DDP3D_LOG_LEVEL\n          value: "info"', deployment)
        self.assertNotIn("priorityClassName", deployment)
        obj = yaml.safe_load(next(d for d in documents(self.template(
            "logLevel=debug", "shutdownGraceSeconds=10", "terminationGracePeriodSeconds=60",
            "leaderElection.id=team-a-ddp3d", "priorityClassName=system-cluster-critical",
            "podLabels.team=ml", "podAnnotations.note=x", "extraEnv[0].name=HTTPS_PROXY",
            "extraEnv[0].value=http://proxy:3128")) if kind_of(d) == "Deployment"))
        pod = obj["spec"]["template"]
        container = pod["spec"]["containers"][0]
        self.assertIn("--leader-election-id=team-a-ddp3d", container["args"])
        self.assertIn("--shutdown-grace-seconds=10", container["args"])
        self.assertEqual(pod["spec"]["terminationGracePeriodSeconds"], 60)
        self.assertEqual(pod["spec"]["priorityClassName"], "system-cluster-critical")
        self.assertEqual(pod["metadata"]["labels"]["team"], "ml")
        self.assertEqual(pod["metadata"]["labels"]["app.kubernetes.io/instance"], RELEASE)
        self.assertEqual(pod["metadata"]["annotations"], {"note": "x"})
        env = {e["name"]: e.get("value") for e in container["env"]}
        self.assertEqual(env["DDP3D_LOG_LEVEL"], "debug")
        self.assertEqual(env["HTTPS_PROXY"], "http://proxy:3128")
        self.assertIn("POD_NAMESPACE", env)
        # Without leader election: no Lease flags at all.
        deployment = next(d for d in documents(self.template("leaderElection.enabled=false"))
                          if kind_of(d) == "Deployment")
        self.assertNotIn("--leader-elect", deployment)

    def test_leader_election_id_is_per_release(self):
        def lease(release, *sets):
            res = run([self.helm, "template", release, CHART, "-n", NS, "--skip-tests"]
                      + [a for s in sets for a in ("--set", s)])
            self.assertEqual(res.returncode, 0, res.stderr)
            return re.search(r"--leader-election-id=(\S+)", res.stdout).group(1)
        self.assertEqual(lease("ddp3d"), "ddp3d-operator")
        self.assertEqual(lease("team-a"), "team-a-ddp3d-operator")
        self.assertEqual(lease("team-b"), "team-b-ddp3d-operator")
        self.assertEqual(lease("team-b", "leaderElection.id=shared"), "shared")

    def test_pod_disruption_budget_only_with_more_than_one_replica(self):
        self.assertNotIn("PodDisruptionBudget", [kind_of(d) for d in documents(self.template())])
        pdb = yaml.safe_load(next(d for d in documents(self.template("replicaCount=2"))
                                  if kind_of(d) == "PodDisruptionBudget"))
        self.assertEqual(pdb["spec"]["minAvailable"], 1)
        self.assertEqual(pdb["metadata"]["namespace"], NS)
        self.assertEqual(pdb["spec"]["selector"]["matchLabels"],
                         {"app.kubernetes.io/name": "ddp3d", "app.kubernetes.io/instance": RELEASE,
                          "app.kubernetes.io/component": "operator"})

    def test_helm_test_hooks(self):
        """`helm test`: a ServiceAccount + Role + RoleBinding that may only read the test's
        TrainingJob, the suspended TrainingJob, and a pod that waits for its phase; each a
        test hook, ordered by weight, deleted before a rerun and once it passed."""
        self.assertNotIn("helm.sh/hook", self.template())  # not part of an install
        objs = [yaml.safe_load(d) for d in documents(self.template(tests=True))]
        hooks = [o for o in objs if "helm.sh/hook" in o["metadata"].get("annotations", {})]
        self.assertEqual(sorted((o["kind"], o["metadata"]["name"]) for o in hooks),
                         [("Pod", "ddp3d-test-reconcile"), ("Role", "ddp3d-test"),
                          ("RoleBinding", "ddp3d-test"), ("ServiceAccount", "ddp3d-test"),
                          ("TrainingJob", "ddp3d-test")])
        weight = {}
        for o in hooks:
            ann = o["metadata"]["annotations"]
            self.assertEqual(ann["helm.sh/hook"], "test")
            self.assertEqual(ann["helm.sh/hook-delete-policy"], "before-hook-creation,hook-succeeded")
            self.assertEqual(o["metadata"]["namespace"], NS)
            weight[o["kind"]] = int(ann["helm.sh/hook-weight"])
        # RBAC, then the job, then the pod that reads it.
        self.assertLess(max(weight["ServiceAccount"], weight["Role"], weight["RoleBinding"]),
                        weight["TrainingJob"])
        self.assertLess(weight["TrainingJob"], weight["Pod"])
        role = next(o for o in hooks if o["kind"] == "Role")
        self.assertEqual(role["rules"], [{"apiGroups": ["ddp3d.io"], "resources": ["trainingjobs"],
                                          "resourceNames": ["ddp3d-test"],
                                          "verbs": ["get", "list", "watch"]}])
        binding = next(o for o in hooks if o["kind"] == "RoleBinding")
        self.assertEqual(binding["subjects"], [{"kind": "ServiceAccount", "name": "ddp3d-test",
                                                "namespace": NS}])
        self.assertEqual(binding["roleRef"]["name"], "ddp3d-test")
        job = next(o for o in hooks if o["kind"] == "TrainingJob")
        self.assertIs(job["spec"]["runPolicy"]["suspend"], True)
        pod = next(o for o in hooks if o["kind"] == "Pod")
        self.assertEqual(pod["spec"]["serviceAccountName"], "ddp3d-test")
        self.assertEqual(pod["spec"]["restartPolicy"], "Never")
        container = pod["spec"]["containers"][0]
        self.assertEqual(container["image"], "registry.k8s.io/kubectl:v1.32.8")
        self.assertEqual(container["command"], [
            "kubectl", "wait", f"--namespace={NS}", "trainingjob.ddp3d.io/ddp3d-test",
            "--for=jsonpath={.status.phase}=Suspended", "--timeout=120s"])
        self.assertIs(container["securityContext"]["readOnlyRootFilesystem"], True)
        self.assertIs(pod["spec"]["securityContext"]["runAsNonRoot"], True)
        # tests.image and tests.timeoutSeconds; the job follows the watched namespaces.
        objs = [yaml.safe_load(d) for d in documents(self.template(
            "tests.image.repository=ddp3d.local/kubectl", "tests.image.tag=v1.36.3",
            "tests.timeoutSeconds=30", "rbac.scope=namespace", "watchNamespaces={team-a,team-b}",
            tests=True))]
        hooks = {o["kind"]: o for o in objs if "helm.sh/hook" in o["metadata"].get("annotations", {})}
        self.assertEqual(hooks["Pod"]["spec"]["containers"][0]["image"], "ddp3d.local/kubectl:v1.36.3")
        self.assertIn("--timeout=30s", hooks["Pod"]["spec"]["containers"][0]["command"])
        self.assertIn("--namespace=team-a", hooks["Pod"]["spec"]["containers"][0]["command"])
        self.assertEqual(hooks["Pod"]["metadata"]["namespace"], NS)
        self.assertEqual(hooks["ServiceAccount"]["metadata"]["namespace"], NS)
        for kind in ("TrainingJob", "Role", "RoleBinding"):
            self.assertEqual(hooks[kind]["metadata"]["namespace"], "team-a", kind)
        self.assertEqual(hooks["RoleBinding"]["subjects"][0]["namespace"], NS)
        # The release namespace among the watched ones: the job stays there.
        objs = [yaml.safe_load(d) for d in documents(self.template(
            f"watchNamespaces={{team-a,{NS}}}", tests=True))]
        self.assertEqual(next(o for o in objs if o["kind"] == "TrainingJob")["metadata"]["namespace"], NS)
        # tests.enabled=false: no hook at all.
        self.assertNotIn("helm.sh/hook", self.template("tests.enabled=false", tests=True))

    def test_security_values_become_operator_flags(self):
        deployment = next(d for d in documents(self.template(
            "security.trustedNamespaces={infra,research}",
            "security.allowedServiceAccounts={default,reader}")) if kind_of(d) == "Deployment")
        self.assertIn("- --trusted-namespaces=infra,research", deployment)
        self.assertIn("- --allowed-service-accounts=default,reader", deployment)

    def test_monitoring_render_only_when_enabled(self):
        kinds = [kind_of(d) for d in documents(
            self.template("serviceMonitor.enabled=true", "prometheusRule.enabled=true"))]
        for kind in ("ServiceMonitor", "PodMonitor", "PrometheusRule"):
            self.assertIn(kind, kinds)
        kinds = [kind_of(d) for d in documents(self.template("grafana.dashboards.enabled=false",
                                                             "leaderElection.enabled=false"))]
        self.assertNotIn("ConfigMap", kinds)
        self.assertNotIn("Role", kinds)

    def rendered_rules(self):
        rule_doc = next(d for d in documents(self.template("prometheusRule.enabled=true"))
                        if kind_of(d) == "PrometheusRule")
        # A PrometheusRule's spec is a Prometheus rules file.
        return textwrap.dedent(rule_doc.split("\nspec:\n", 1)[1])

    def test_alert_rules_pass_promtool_and_use_documented_metrics(self):
        rules = self.rendered_rules()
        path = os.path.join(self.tmp.name, "rules.yaml")
        with open(path, "w") as f:
            f.write(rules)
        res = run(["promtool", "check", "rules", path])
        self.assertEqual(res.returncode, 0, res.stdout + res.stderr)
        self.assertIn("SUCCESS: 6 rules found", res.stdout)
        used = set()
        for expr in re.findall(r"^\s*expr:\s*(.+)$", rules, re.M):
            used |= metric_names(expr)
        self.assertTrue(used)
        self.assertLessEqual(used, documented_metrics())

    def test_alerts_fire_as_promtool_test_rules_expects(self):
        """alerts_test.yaml: every alert fires on the input series it is for, with the labels and
        annotations expected, and stays quiet otherwise. The input carries the target labels a
        scrape attaches (namespace, job, pod, ...), so an alert grouping by one of those instead
        of the TrainingJob's own label fails here."""
        rules = self.rendered_rules()
        with open(ALERTS_TEST) as f:
            cases = f.read()
        work = os.path.join(self.tmp.name, "alerts")
        os.makedirs(work, exist_ok=True)
        with open(os.path.join(work, "rules.yaml"), "w") as f:
            f.write(rules)
        shutil.copy(ALERTS_TEST, work)
        res = run(["promtool", "test", "rules", os.path.basename(ALERTS_TEST)], cwd=work)
        self.assertEqual(res.returncode, 0, res.stdout + res.stderr)
        self.assertIn("SUCCESS", res.stdout)
        # Every alert has a case in which it fires; a new alert needs one.
        alerts = set(re.findall(r"^\s*- alert:\s*(\S+)\s*$", rules, re.M))
        self.assertEqual(len(alerts), 6, rules)
        firing = set(re.findall(r"^\s*alertname:\s*(\S+)\s*\n\s*exp_alerts:\s*\n\s*- exp_labels:",
                                cases, re.M))
        self.assertEqual(firing, alerts)

    def test_dashboards_are_valid_and_use_documented_metrics(self):
        files = sorted(glob.glob(os.path.join(CHART, "dashboards", "*.json")))
        self.assertEqual([os.path.basename(f) for f in files], ["operator.json", "training.json"])
        recording, used = [], set()
        for path in files:
            with open(path) as f:
                dash = json.load(f)
            self.assertTrue(dash["uid"].startswith("ddp3d-"))
            self.assertTrue(dash["panels"])
            for panel in dash["panels"]:
                for target in panel["targets"]:
                    expr = target["expr"]
                    used |= metric_names(expr)
                    # Grafana variables become matchers that promtool can parse.
                    recording.append(expr.replace("$job_name", ".*"))
        self.assertLessEqual(used, documented_metrics())
        rules = {"groups": [{"name": "dashboards", "rules": [
            {"record": f"ddp3d:dashboard_query:{i}", "expr": e} for i, e in enumerate(recording)]}]}
        path = os.path.join(self.tmp.name, "dashboards.rules.json")
        with open(path, "w") as f:
            json.dump(rules, f)  # JSON is YAML
        res = run(["promtool", "check", "rules", path])
        self.assertEqual(res.returncode, 0, res.stdout + res.stderr)
        self.assertIn(f"SUCCESS: {len(recording)} rules found", res.stdout)


def parse_can_i_list(text):
    """`kubectl auth can-i --list` table -> {resource: set(verbs)} (resource rules only)."""
    grants = {}
    for line in text.splitlines()[1:]:
        m = re.match(r"^(\S+)\s+\[(.*?)\]\s+\[(.*?)\]\s+\[(.*?)\]\s*$", line)
        if not m or m.group(1).startswith("/") or line.startswith(" "):
            continue
        resource, verbs = m.group(1), set(m.group(4).split())
        grants.setdefault(resource, set()).update(verbs)
    return grants


class ChartInstallTest(unittest.TestCase):
    """helm install into a real API server with RBAC on."""

    @classmethod
    def setUpClass(cls):
        cls.helm = helm_path()
        cls.tmp = tempfile.TemporaryDirectory(prefix="ddp3d-chart-install-")
        cls.cp = ControlPlane(os.path.join(cls.tmp.name, "cp")).start()
        print(f"\ncontrol plane started in {cls.cp.start_seconds:.1f}s", file=sys.stderr)
        try:
            t0 = time.monotonic()
            # Helm's caches and repositories stay inside the test's directory.
            cls.helm_env = dict(os.environ,
                                HELM_CACHE_HOME=os.path.join(cls.tmp.name, "helm-cache"),
                                HELM_CONFIG_HOME=os.path.join(cls.tmp.name, "helm-config"),
                                HELM_DATA_HOME=os.path.join(cls.tmp.name, "helm-data"),
                                KUBECACHEDIR=os.path.join(cls.tmp.name, "kube-cache"))
            cls.install = run([cls.helm, "install", RELEASE, CHART, "-n", NS, "--create-namespace",
                               "--kubeconfig", cls.cp.kubeconfig], env=cls.helm_env)
            print(f"helm install took {time.monotonic() - t0:.1f}s", file=sys.stderr)
        except BaseException:
            cls.cp.stop()
            cls.tmp.cleanup()
            raise

    @classmethod
    def tearDownClass(cls):
        try:
            cls.cp.stop()
        finally:
            cls.tmp.cleanup()

    def setUp(self):
        self.assertEqual(self.install.returncode, 0, self.install.stdout + self.install.stderr)

    def get_json(self, *args):
        return json.loads(self.cp.kubectl(*args, "-o", "json", check=True).stdout)

    def can_i(self, verb, resource, namespace=NS):
        # "RESOURCE/SUB" means a subresource here (kubectl would read it as a name).
        resource, _, sub = resource.partition("/")
        extra = [f"--subresource={sub}"] if sub else []
        res = self.cp.kubectl("auth", "can-i", verb, resource, *extra, "-n", namespace,
                              f"--as={OPERATOR_SA}")
        self.assertIn(res.stdout.strip(), ("yes", "no"), res.stderr)
        return res.stdout.strip() == "yes"

    def allowed(self, verb, resource, namespace=NS):
        """The API server's SubjectAccessReview for the operator's ServiceAccount, for APIs
        this API server does not serve (Kueue's): kubectl's can-i needs them discoverable.
        RESOURCE is "plural.group" or "plural.group/subresource"."""
        resource, _, sub = resource.partition("/")
        plural, _, group = resource.partition(".")
        attrs = {"verb": verb, "group": group, "resource": plural, "namespace": namespace}
        if sub:
            attrs["subresource"] = sub
        review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
                  "spec": {"user": OPERATOR_SA,
                           "groups": ["system:serviceaccounts", f"system:serviceaccounts:{NS}",
                                      "system:authenticated"],
                           "resourceAttributes": attrs}}
        res = self.cp.kubectl("create", "-o", "json", "-f", "-", stdin=json.dumps(review),
                              check=True)
        return json.loads(res.stdout)["status"].get("allowed", False)

    def test_install_created_the_objects(self):
        self.assertIn("STATUS: deployed", self.install.stdout)
        self.assertIn("Worker metrics: every training pod serves /metrics", self.install.stdout)  # NOTES.txt
        self.assertIn("kubectl apply -f examples/cpu-demo/pvc.yaml -f examples/cpu-demo/job.yaml",
                      self.install.stdout)
        self.assertIn(f"helm test {RELEASE} -n {NS}", self.install.stdout)
        # helm install creates no test hook.
        self.assertIn("NotFound", self.cp.kubectl("-n", NS, "get", "trainingjob", "ddp3d-test").stderr)
        crd = self.get_json("get", "crd", "trainingjobs.ddp3d.io")
        established = {c["type"]: c["status"] for c in crd["status"]["conditions"]}
        self.assertEqual(established.get("Established"), "True")
        deploy = self.get_json("-n", NS, "get", "deployment", "ddp3d-operator")
        container = deploy["spec"]["template"]["spec"]["containers"][0]
        self.assertIn("--leader-elect", container["args"])
        self.assertEqual(container["readinessProbe"]["httpGet"]["path"], "/readyz")
        self.assertEqual(deploy["spec"]["template"]["spec"]["serviceAccountName"], "ddp3d-operator")
        self.get_json("-n", NS, "get", "serviceaccount", "ddp3d-operator")
        svc = self.get_json("-n", NS, "get", "service", "ddp3d-operator-metrics")
        self.assertEqual(svc["spec"]["ports"][0]["name"], "metrics")
        cm = self.get_json("-n", NS, "get", "configmap", "ddp3d-dashboards")
        self.assertEqual(cm["metadata"]["labels"]["grafana_dashboard"], "1")
        for key in ("ddp3d-operator.json", "ddp3d-training.json"):
            self.assertTrue(json.loads(cm["data"][key])["panels"])
        self.get_json("get", "clusterrolebinding", "ddp3d-operator")
        self.get_json("-n", NS, "get", "rolebinding", "ddp3d-operator-leader-election")

    def test_service_account_has_exactly_the_operator_verbs(self):
        # In some other namespace only the ClusterRole applies...
        self.cp.kubectl("create", "namespace", "team-a", check=True)
        res = self.cp.kubectl("auth", "can-i", "--list", "-n", "team-a", f"--as={OPERATOR_SA}",
                              check=True)
        grants = {r: v for r, v in parse_can_i_list(res.stdout).items() if r not in BOOTSTRAP}
        self.assertEqual(grants, EXPECTED_CLUSTER, res.stdout)
        # ...and in the release namespace the leader-election Lease is added.
        res = self.cp.kubectl("auth", "can-i", "--list", "-n", NS, f"--as={OPERATOR_SA}",
                              check=True)
        grants = {r: v for r, v in parse_can_i_list(res.stdout).items() if r not in BOOTSTRAP}
        self.assertEqual(grants, {**EXPECTED_CLUSTER, **EXPECTED_RELEASE_NS}, res.stdout)

    def test_second_release_upgrade_and_uninstall(self):
        # A second release beside the first: cluster-scoped names must not collide, the
        # existing CRD is left alone, upgrade applies values, uninstall removes it all
        # but the CRD (Helm never deletes CRDs, so TrainingJobs survive).
        helm = [self.helm, "--kubeconfig", self.cp.kubeconfig, "-n", "ops2"]
        res = run(helm + ["install", "second", CHART, "--create-namespace"], env=self.helm_env)
        self.assertEqual(res.returncode, 0, res.stderr)
        self.get_json("get", "clusterrole", "second-ddp3d-operator")
        res = run(helm + ["upgrade", "second", CHART, "--set", "replicaCount=2",
                          "--set", "watchNamespaces={team-a,team-b}"], env=self.helm_env)
        self.assertEqual(res.returncode, 0, res.stderr)
        deploy = self.get_json("-n", "ops2", "get", "deployment", "second-ddp3d-operator")
        self.assertEqual(deploy["spec"]["replicas"], 2)
        # Its own Lease, and a PodDisruptionBudget now that there are two replicas.
        self.assertIn("--leader-election-id=second-ddp3d-operator",
                      deploy["spec"]["template"]["spec"]["containers"][0]["args"])
        pdb = self.get_json("-n", "ops2", "get", "poddisruptionbudget", "second-ddp3d-operator")
        self.assertEqual(pdb["spec"]["minAvailable"], 1)
        self.assertIn("--namespace=team-a,team-b",
                      deploy["spec"]["template"]["spec"]["containers"][0]["args"])
        res = run(helm + ["uninstall", "second"], env=self.helm_env)
        self.assertEqual(res.returncode, 0, res.stderr)
        gone = self.cp.kubectl("get", "clusterrole", "second-ddp3d-operator")
        self.assertIn("NotFound", gone.stderr)
        self.get_json("get", "crd", "trainingjobs.ddp3d.io")
        self.get_json("get", "clusterrole", "ddp3d-operator")  # the first release is intact

    def test_bad_values_fail_helm_install(self):
        res = run([self.helm, "--kubeconfig", self.cp.kubeconfig, "install", "bad", CHART,
                   "-n", "bad-values", "--set", "logLevel=trace", "--set", "image.tagg=x"],
                  env=self.helm_env)
        self.assertNotEqual(res.returncode, 0)
        self.assertIn('- logLevel: logLevel must be one of the following: "info", "debug"', res.stderr)
        self.assertIn("- image: Additional property tagg is not allowed", res.stderr)

    def test_helm_test_passes_against_the_operator(self):
        """`helm test` with the operator binary running with the Deployment's flags as the
        chart's ServiceAccount. This API server has no kubelet: the test pod's command is run
        here as the test's ServiceAccount, and its phase written as a kubelet would."""
        self.assertTrue(os.access(OPERATOR, os.X_OK), f"{OPERATOR} not built")
        deploy = self.get_json("-n", NS, "get", "deployment", "ddp3d-operator")
        args = [a for a in deploy["spec"]["template"]["spec"]["containers"][0]["args"]
                if not a.startswith(("--metrics-address", "--health-address"))]
        kubeconfig = os.path.join(self.tmp.name, "operator.kubeconfig")
        self.cp.script("sa-kubeconfig", NS, "ddp3d-operator", kubeconfig)
        log_path = os.path.join(self.tmp.name, "operator.log")
        with open(log_path, "w") as log:
            operator = subprocess.Popen(
                [OPERATOR, "--kubeconfig", kubeconfig, "--metrics-address=0",
                 "--health-address=0", *args], stdout=log, stderr=subprocess.STDOUT,
                env=dict(os.environ, POD_NAME="helm-test-op", POD_NAMESPACE=NS))
        helm_test = subprocess.Popen(
            [self.helm, "--kubeconfig", self.cp.kubeconfig, "test", RELEASE, "-n", NS,
             "--timeout", "120s"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            env=self.helm_env)
        try:
            def wait(what, fn, timeout=60):
                deadline = time.monotonic() + timeout
                while time.monotonic() < deadline:
                    value = fn()
                    if value:
                        return value
                    time.sleep(0.2)
                with open(log_path) as f:
                    self.fail(f"timed out waiting for {what}; operator log:\n{f.read()[-3000:]}")

            def job_phase():
                res = self.cp.kubectl("-n", NS, "get", "trainingjob", "ddp3d-test", "-o",
                                      "jsonpath={.status.phase}")
                return res.stdout if res.returncode == 0 and res.stdout else None
            # Helm made the suspended job; the operator (and only it) wrote its phase.
            self.assertEqual(wait("the test job's phase", job_phase), "Suspended")
            pod = wait("the test pod", lambda: self.cp.kubectl(
                "-n", NS, "get", "pod", "ddp3d-test-reconcile", "-o", "json").stdout)
            pod = json.loads(pod)
            self.assertEqual(self.cp.kubectl("-n", NS, "get", "pods", "-o", "name").stdout.split(),
                             ["pod/ddp3d-test-reconcile"])  # a suspended job has no pods
            # The pod's command, as its ServiceAccount: RBAC lets it do exactly that.
            command = pod["spec"]["containers"][0]["command"]
            self.assertEqual(command[0], "kubectl")
            sa = f"system:serviceaccount:{NS}:{pod['spec']['serviceAccountName']}"
            res = self.cp.kubectl(*command[1:], f"--as={sa}")
            self.assertEqual(res.returncode, 0, res.stderr)
            self.assertIn("trainingjob.ddp3d.io/ddp3d-test condition met", res.stdout)
            for verb, what in (("get", "trainingjobs/other"), ("list", "trainingjobs"),
                               ("create", "trainingjobs"), ("delete", "trainingjobs/ddp3d-test"),
                               ("patch", "trainingjobs/ddp3d-test"), ("get", "pods")):
                res = self.cp.kubectl("auth", "can-i", verb, what, "-n", NS, f"--as={sa}")
                self.assertEqual(res.stdout.strip(), "no", (verb, what))
            # The kubelet's part: the pod exited 0.
            self.cp.kubectl("-n", NS, "patch", "pod", "ddp3d-test-reconcile", "--subresource=status",
                            "--type=merge", "-p", '{"status":{"phase":"Succeeded"}}', check=True)
            out, _ = helm_test.communicate(timeout=90)
            self.assertEqual(helm_test.returncode, 0, out)
            self.assertRegex(out, r"TEST SUITE:\s+ddp3d-test-reconcile")
            self.assertIn("Phase:          Succeeded", out)
            # Passed: every test object is deleted (hook-succeeded).
            def gone():
                res = self.cp.kubectl("-n", NS, "get", "trainingjob/ddp3d-test", "pod/ddp3d-test-reconcile",
                                      "serviceaccount/ddp3d-test", "role/ddp3d-test",
                                      "rolebinding/ddp3d-test", "--ignore-not-found", "-o", "name")
                return res.returncode == 0 and not res.stdout.strip()
            wait("the test objects' deletion", gone, 30)
        finally:
            if helm_test.poll() is None:
                helm_test.kill()
                helm_test.wait()
            operator.terminate()
            self.assertEqual(operator.wait(timeout=30), 0)

    def test_spot_checks_through_can_i(self):
        self.assertTrue(self.can_i("create", "pods", "team-b"))
        self.assertTrue(self.can_i("watch", "trainingjobs.ddp3d.io", "team-b"))
        self.assertTrue(self.can_i("update", "trainingjobs.ddp3d.io/status", "team-b"))
        self.assertTrue(self.can_i("update", "trainingjobs.ddp3d.io/finalizers", "team-b"))
        self.assertTrue(self.can_i("update", "leases.coordination.k8s.io"))
        self.assertTrue(self.can_i("get", "priorityclasses.scheduling.k8s.io", NS))
        # Kueue's API is not served here: asked of the authorizer directly.
        for verb, resource, ns, want in [
                ("create", "workloads.kueue.x-k8s.io", "team-b", True),
                ("patch", "workloads.kueue.x-k8s.io", "team-b", True),
                ("watch", "workloads.kueue.x-k8s.io", "", True),
                ("update", "workloads.kueue.x-k8s.io/status", "team-b", True),
                ("list", "resourceflavors.kueue.x-k8s.io", "", True),
                ("update", "workloads.kueue.x-k8s.io", "team-b", False),
                ("delete", "workloads.kueue.x-k8s.io", "team-b", False),
                ("get", "workloads.kueue.x-k8s.io", "team-b", False),
                ("patch", "workloads.kueue.x-k8s.io/status", "team-b", False),
                ("create", "resourceflavors.kueue.x-k8s.io", "", False),
                ("get", "resourceflavors.kueue.x-k8s.io", "", False),
                ("list", "clusterqueues.kueue.x-k8s.io", "", False),
                ("create", "localqueues.kueue.x-k8s.io", "team-b", False),
                ("update", "workloadpriorityclasses.kueue.x-k8s.io", "", False)]:
            with self.subTest(verb=verb, resource=resource, namespace=ns):
                self.assertEqual(self.allowed(verb, resource, ns), want)
        for verb, resource, ns in [("get", "secrets", NS), ("list", "secrets", "team-b"),
                                   ("get", "configmaps", "team-b"), ("update", "pods", "team-b"),
                                   ("patch", "pods", "team-b"), ("create", "deployments.apps", NS),
                                   ("get", "nodes", NS), ("update", "nodes", NS),
                                   ("patch", "nodes/status", NS), ("delete", "nodes", NS),
                                   ("get", "podgroups.scheduling.k8s.io", "team-b"),
                                   ("list", "priorityclasses.scheduling.k8s.io", NS),
                                   ("create", "priorityclasses.scheduling.k8s.io", NS),
                                   ("delete", "podgroups.scheduling.k8s.io", "team-b"),
                                   ("update", "services", "team-b"),
                                   ("create", "trainingjobs.ddp3d.io", "team-b"),
                                   ("update", "leases.coordination.k8s.io", "team-b"),
                                   ("delete", "leases.coordination.k8s.io", NS),
                                   ("create", "pods/exec", "team-b"), ("get", "pods/log", "team-b"),
                                   ("delete", "trainingjobs.ddp3d.io/status", "team-b"),
                                   ("patch", "trainingjobs.ddp3d.io/finalizers", "team-b"),
                                   ("patch", "trainingjobs.ddp3d.io/status", "team-b"),
                                   ("update", "trainingjobs.ddp3d.io", "team-b"),
                                   ("get", "pods", "team-b"), ("delete", "services", "team-b"),
                                   ("update", "events", "team-b"),
                                   ("create", "events.events.k8s.io", "team-b")]:
            with self.subTest(verb=verb, resource=resource, namespace=ns):
                self.assertFalse(self.can_i(verb, resource, ns))


if __name__ == "__main__":
    if not shutil.which("promtool"):
        sys.exit("promtool not found (Debian package prometheus)")
    unittest.main(verbosity=2)
