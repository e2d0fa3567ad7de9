"""The Helm chart with the real helm binary, promtool and a real kube-apiserver.

Proves: the chart's CRD is the same file as crds/; `helm lint` passes; `helm
template` renders the expected objects (monitoring objects only when enabled); the
alert rules and every dashboard query are valid PromQL (promtool) and use only the
documented ddp3d_* metric names; every alert fires as `promtool test rules` expects
(alerts_test.yaml); `helm install` into a real API server creates the
objects; and under RBAC the operator's ServiceAccount may do exactly what the
operator needs and nothing else (Kueue's rules included, by kueue.enabled and rbac.scope).
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

SOURCE_DIR = os.environ.get(
    "DDP3D_SOURCE_DIR",
    os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..")))
sys.path.insert(0, os.path.join(SOURCE_DIR, "tests", "testbin"))
from controlplane import ControlPlane  # noqa: E402

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
    "events": {"create"},
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

    def template(self, *sets):
        args = [self.helm, "template", RELEASE, CHART, "-n", NS]
        for s in sets:
            args += ["--set", s]
        res = run(args)
        self.assertEqual(res.returncode, 0, res.stderr)
        return res.stdout

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
        for sets, message in ((["rbac.scope=namespace"], "rbac.scope=namespace needs watchNamespaces"),
                              (["rbac.scope=everywhere"], "rbac.scope: expected cluster or namespace")):
            args = [self.helm, "template", RELEASE, CHART, "-n", NS] + [
                a for s in sets for a in ("--set", s)]
            res = run(args)
            self.assertNotEqual(res.returncode, 0)
            self.assertIn(message, res.stderr)

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
        self.assertIn("--namespace=team-a,team-b",
                      deploy["spec"]["template"]["spec"]["containers"][0]["args"])
        res = run(helm + ["uninstall", "second"], env=self.helm_env)
        self.assertEqual(res.returncode, 0, res.stderr)
        gone = self.cp.kubectl("get", "clusterrole", "second-ddp3d-operator")
        self.assertIn("NotFound", gone.stderr)
        self.get_json("get", "crd", "trainingjobs.ddp3d.io")
        self.get_json("get", "clusterrole", "ddp3d-operator")  # the first release is intact

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
                                   ("patch", "events", "team-b"),
                                   ("create", "events.events.k8s.io", "team-b")]:
            with self.subTest(verb=verb, resource=resource, namespace=ns):
                self.assertFalse(self.can_i(verb, resource, ns))


if __name__ == "__main__":
    if not shutil.which("promtool"):
        sys.exit("promtool not found (Debian package prometheus)")
    unittest.main(verbosity=2)
