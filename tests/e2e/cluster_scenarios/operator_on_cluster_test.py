"""The operator's scenarios on the real one-machine cluster (tests/cluster/up.sh): nothing on the
path helm -> operator pod -> worker pods -> DNS -> training is played by test code.

a. `helm install ddp3d charts/ddp3d` with the locally built operator image
   (tools/build_images.sh, imported into the cluster's containerd): the operator runs as a
   pod under the chart's own ServiceAccount and RBAC, reaches kube-apiserver through the
   `kubernetes` Service (kube-proxy), its readiness and liveness probes pass and it holds
   the leader Lease.
b. `kubectl apply -f` a CPU TrainingJob of 2 nodes (the worker image, the PointPillars demo
   config with fewer epochs) in a namespace that enforces Pod Security "restricted": the
   ranks rendezvous at rank 0's CoreDNS name of the headless Service, train to Succeeded,
   and write their checkpoints to a PersistentVolume that outlives the pods; a
   `tools/dist_test.sh` pod then reports KITTI AP from the last checkpoint.
c. SIGKILL one worker container mid-training (through containerd): the operator restarts
   the whole group (attempt + 1), which resumes from the newest checkpoint and succeeds.
d. Prometheus (upstream's server from Go modules, on the node: Debian's has no Kubernetes
   discovery) finds the worker pods and the operator through
   Kubernetes service discovery, as a ServiceAccount with list/watch rights, keeps the
   pods the operator annotated (`prometheus.io/scrape`) and the chart's metrics Service,
   scrapes them over the pod network, and every query of both chart dashboards returns
   data from the live jobs.
e. The Prometheus Operator (tests/cluster/prometheus_operator.sh: upstream's, from Go
   modules, on the host) consumes the chart's ServiceMonitor, PodMonitor and PrometheusRule
   (`helm upgrade` with serviceMonitor/prometheusRule enabled, kube-prometheus-stack's
   `release` label and alert windows of seconds): the Prometheus it runs as a StatefulSet
   pod (images ddp3d.local/prometheus and ddp3d.local/prometheus-config-reloader) scrapes
   the operator's Service and a running job's worker pods and loads the chart's 6 alerts;
   then DDP3DGangRestartLoop and DDP3DTrainingJobFailed fire for a job whose worker keeps
   failing, and DDP3DTrainingStalled for a job one of whose ranks is SIGSTOPped (the other
   blocks in its all-reduce and keeps serving /metrics).
f. Deleting the jobs garbage-collects their pods, Services and Secrets; `helm uninstall`
   leaves no operator pod, container or Lease holder behind (the ReplicaSet and its pods go
   by the controller-manager's real garbage collection).

Needs root (tests/cluster). One cluster per machine: ctest serialises the suites that start
one (RESOURCE_LOCK ddp3d_cluster).
"""

import calendar
import glob
import json
import os
import re
import subprocess
import sys
import time
import unittest
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cluster_scenario import (CLUSTER, OPERATOR, OPERATOR_IMAGE, OPERATOR_NS, RELEASE,  # noqa: E402
                              RESTRICTED, SOURCE_DIR, WORKER_IMAGE, WORKER_UID,
                              ClusterScenario, log, run)

JOBS_NS = "train"
DEMO_CONFIG = "configs/pointpillars/pointpillars_demo_synthetic_car.yaml"
TOY_CONFIG = "configs/toy/toy_regression_2proc.yaml"
EXAMPLE = os.path.join(SOURCE_DIR, "examples", "cpu-demo")
DATA = "/workspace/ddp3d/data"  # where examples/cpu-demo mounts the volume: data/ of the WORKDIR
CLAIM = "ddp3d-demo-data"  # examples/cpu-demo/pvc.yaml


class OperatorOnClusterTest(ClusterScenario):
    def test_a_helm_install_runs_operator_pod(self):
        t0 = time.monotonic()
        pod = self.install_operator()
        name = pod["metadata"]["name"]
        log(f"helm install -> operator pod Ready: {time.monotonic() - t0:.1f}s ({name})")

        # The chart's identity and image, on the real runtime, as a non-root user: the
        # kubelet refuses runAsNonRoot for an image whose user is root or not numeric.
        self.assertEqual(pod["spec"]["serviceAccountName"], OPERATOR)
        self.assertEqual(pod["spec"]["containers"][0]["image"], OPERATOR_IMAGE)
        self.assertTrue(pod["spec"]["securityContext"]["runAsNonRoot"])
        status = pod["status"]["containerStatuses"][0]
        self.assertTrue(status["imageID"], status)
        self.assertIn("running", status["state"])
        self.assertEqual(status["restartCount"], 0, "liveness probe or a crash restarted it")

        # It holds the leader Lease under its pod name (POD_NAME from the downward API).
        def leader():
            res = self.kubectl("-n", OPERATOR_NS, "get", "lease", OPERATOR, "-o", "json", check=False)
            if res.returncode != 0:
                return False, res.stderr
            holder = json.loads(res.stdout)["spec"].get("holderIdentity", "")
            return holder.startswith(name), holder
        holder = self.wait(f"Lease {OPERATOR_NS}/{OPERATOR} held by {name}", 60, leader)
        log(f"Lease {OPERATOR_NS}/{OPERATOR} holder: {holder}")

        # Its API calls come from its pod address, as its ServiceAccount: in-cluster config
        # through the `kubernetes` Service's ClusterIP, not a kubeconfig of the test's.
        user = f"system:serviceaccount:{OPERATOR_NS}:{OPERATOR}"
        pod_ip = pod["status"]["podIP"]

        def audited():
            seen = set()
            with open(os.path.join(self.dir, "audit.log")) as f:
                for line in f:
                    e = json.loads(line)
                    if e.get("user", {}).get("username") == user:
                        seen.update(e.get("sourceIPs", []))
            return pod_ip in seen, seen
        self.wait(f"audited requests of {user} from {pod_ip}", 30, audited)

        # Liveness: still Ready, not restarted, after several probe periods.
        time.sleep(12)
        pod = self.get("-n", OPERATOR_NS, "pod", name)
        self.assertEqual(pod["status"]["containerStatuses"][0]["restartCount"], 0)
        type(self).installed = True

    # -- training on the cluster ---------------------------------------------------------
    @classmethod
    def jobs_namespace(cls):
        """The jobs' namespace (Pod Security "restricted" enforced by the real admission
        plugin), examples/cpu-demo/pvc.yaml in it, and the PersistentVolume that a
        provisioner would make on kind: a host folder writable by the worker's user. What
        the pods write there outlives them."""
        if getattr(cls, "volume", None):
            return cls.volume
        cls.volume = os.path.join(cls.dir, "volumes", "data")
        os.makedirs(cls.volume)
        os.chown(cls.volume, WORKER_UID, WORKER_UID)
        items = [
            {"apiVersion": "v1", "kind": "Namespace",
             "metadata": {"name": JOBS_NS, "labels": {
                 "pod-security.kubernetes.io/enforce": "restricted",
                 "pod-security.kubernetes.io/enforce-version": "latest"}}},
            {"apiVersion": "v1", "kind": "PersistentVolume",
             "metadata": {"name": "scenarios-data"},
             "spec": {"capacity": {"storage": "2Gi"}, "accessModes": ["ReadWriteOnce"],
                      "persistentVolumeReclaimPolicy": "Retain", "storageClassName": "",
                      "claimRef": {"namespace": JOBS_NS, "name": CLAIM},
                      "hostPath": {"path": cls.volume, "type": "Directory"}}},
        ]
        cls.kubectl("apply", "-f", "-", stdin=json.dumps({"apiVersion": "v1", "kind": "List",
                                                           "items": items}))
        cls.kubectl("-n", JOBS_NS, "apply", "-f", os.path.join(EXAMPLE, "pvc.yaml"))
        return cls.volume

    def example_job(self):
        """examples/cpu-demo/job.yaml as the API server will read it (kubectl's own parse)."""
        res = self.kubectl("create", "--dry-run=client", "-o", "json", "-f",
                           os.path.join(EXAMPLE, "job.yaml"))
        return json.loads(res.stdout)

    def apply_job(self, name, config=None, args=(), backoff_limit=None):
        """The example job under another name, config or extra args."""
        self.jobs_namespace()
        job = self.example_job()
        spec = job["spec"]
        job["metadata"] = {"name": name, "namespace": JOBS_NS}
        example_work = spec["args"][spec["args"].index("--work-dir") + 1]
        spec["args"] = [a.replace(example_work, f"data/work_dirs/{name}") for a in spec["args"]]
        spec["args"] += list(args)
        if config:
            spec["config"] = config
        if backoff_limit is not None:
            spec["runPolicy"]["backoffLimit"] = backoff_limit
        self.kubectl("apply", "-f", "-", stdin=json.dumps(job))
        return os.path.join(self.volume, "work_dirs", name)

    def require_operator(self):
        if not getattr(type(self), "installed", False):
            self.fail("scenario a did not install the operator")

    def test_b_cpu_job_trains_on_cluster_and_dist_test_reports_ap(self):
        self.require_operator()
        name, epochs = "pp-demo", 10
        example = self.example_job()
        self.assertEqual(example["spec"]["config"], DEMO_CONFIG)
        self.assertEqual(example["metadata"]["name"], name)
        cfg = ["--cfg-options", f"train_cfg.max_epochs={epochs}"]
        t0 = time.monotonic()
        work = self.apply_job(name, args=cfg)

        self.wait_log(f"{name}-node-0", "Epoch(train) [1]", "rank 0's first logged iteration", 300, 1)
        log(f"kubectl apply -> first iteration: {time.monotonic() - t0:.1f}s")
        self.wait_phase(name, "Succeeded", 600)
        log(f"kubectl apply -> Succeeded ({epochs} epochs): {time.monotonic() - t0:.1f}s")

        master = f"{name}-node-0.{name}.{JOBS_NS}.svc"
        for rank in (0, 1):
            out = self.pod_logs(f"{name}-node-{rank}")
            self.assertIn(f"node {rank}/2: world size 2", out)
            self.assertIn(f"rendezvous at {master}:29500 as rank {rank}/2", out)
        pods = {p["metadata"]["name"]: p for p in self.get("-n", JOBS_NS, "pods")["items"]}
        ips = {pods[f"{name}-node-{r}"]["status"]["podIP"] for r in (0, 1)}
        self.assertEqual(len(ips), 2, "each rank in its own pod network namespace")
        self.assertIn("rendezvous authenticated", self.pod_logs(f"{name}-node-0"))

        # The checkpoints are on the volume, not in the pods.
        with open(os.path.join(work, "last_checkpoint")) as f:
            checkpoint = f.read().strip()
        self.assertTrue(checkpoint.endswith(f"data/work_dirs/{name}/epoch_{epochs}.pth"), checkpoint)
        self.assertTrue(os.path.getsize(os.path.join(work, f"epoch_{epochs}.pth")) > 0)
        self.assertTrue(os.path.isdir(os.path.join(self.volume, "synth-kitti", "training")),
                        "the synthetic dataset is on the volume (the config's relative data_root)")

        # dist_test in a pod of its own (restricted, as every pod in this namespace).
        test = {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"{name}-test", "namespace": JOBS_NS},
            "spec": {
                "restartPolicy": "Never", "automountServiceAccountToken": False,
                "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
                "containers": [{
                    "name": "test", "image": WORKER_IMAGE, "imagePullPolicy": "IfNotPresent",
                    "command": ["bash", "tools/dist_test.sh", DEMO_CONFIG, checkpoint, "0",
                                "--work-dir", f"data/work_dirs/{name}/test"],
                    "securityContext": {k: v for k, v in RESTRICTED.items() if k != "runAsNonRoot"},
                    "volumeMounts": [{"name": "data", "mountPath": DATA}]}],
                "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": CLAIM}}]}}
        self.kubectl("apply", "-f", "-", stdin=json.dumps(test))

        def tested():
            phase = self.get("-n", JOBS_NS, "pod", f"{name}-test")["status"].get("phase")
            return phase in ("Succeeded", "Failed"), phase
        phase = self.wait("the dist_test pod to end", 300, tested, interval=1)
        out = self.pod_logs(f"{name}-test")
        self.assertEqual(phase, "Succeeded", out[-3000:])
        self.assertIn("AP40 Results", out)
        with open(os.path.join(work, "test", "test_metrics.json")) as f:
            metrics = json.load(f)["metrics"]
        bev = metrics["KITTI/Car_BEV_AP40_moderate_strict"]
        loose = metrics["KITTI/Car_BEV_AP40_moderate_loose"]
        log(f"dist_test on the cluster: Car BEV AP40 moderate strict {bev:.2f}, loose {loose:.2f}")
        self.assertGreater(loose, 0.0, "after training the detector finds some cars")

    def test_c_killed_worker_container_restarts_group_and_resumes(self):
        self.require_operator()
        name, epochs = "crash", 30
        work = self.apply_job(name, TOY_CONFIG, ["--cfg-options", f"train_cfg.max_epochs={epochs}"],
                              backoff_limit=2)
        victim = f"{name}-node-1"

        def second_checkpoint():
            # max_keep_ckpts: 2 removes epoch_2.pth at epoch 4: any later one will do.
            saved = glob.glob(os.path.join(work, "epoch_*.pth"))
            return any(int(re.search(r"epoch_(\d+)\.pth$", p)[1]) >= 2 for p in saved), saved
        self.wait_in_job(name, "rank 0's second checkpoint on the volume", 300, second_checkpoint)
        pod = self.get("-n", JOBS_NS, "pod", victim)
        container = pod["status"]["containerStatuses"][0]["containerID"].split("://", 1)[1]
        ctr = [os.path.join(self.env["CACHE"], "bin", "ctr"), "--address",
               self.env["CONTAINERD_SOCK"], "--namespace", "k8s.io"]
        t_kill = time.monotonic()
        kill = run([*ctr, "tasks", "kill", "--signal", "SIGKILL", container])
        self.assertEqual(kill.returncode, 0, kill.stderr)

        def restarted():
            status = self.job_status(name)
            return status.get("restarts", 0) >= 1, status
        self.wait_in_job(name, "the group restarted (restarts 1)", 120, restarted)

        def resumed():
            out = self.pod_logs(f"{name}-node-0")
            return "resumed from" in out, out[-500:]
        self.wait_in_job(name, "attempt 1 resumed", 240, resumed)
        log(f"container killed -> training resumed: {time.monotonic() - t_kill:.1f}s")
        self.wait_phase(name, "Succeeded", 300)
        status = self.job_status(name)
        self.assertEqual(status.get("restarts"), 1, status)
        for rank in (0, 1):
            pod = self.get("-n", JOBS_NS, "pod", f"{name}-node-{rank}")
            self.assertEqual(pod["metadata"]["labels"].get("ddp3d.io/attempt"), "1")
        out = self.pod_logs(f"{name}-node-0")
        found = re.search(r"resumed from (\S+epoch_(\d+)\.pth) at epoch (\d+)", out)
        self.assertIsNotNone(found, out[-3000:])
        self.assertGreaterEqual(int(found.group(2)), 2)
        self.assertIn(f"data/work_dirs/{name}/", found.group(1))
        self.assertIn("training finished", out)

    def prometheus_config(self):
        """Kubernetes service discovery the way a cluster's Prometheus is commonly set up:
        pods by their prometheus.io annotations, the operator through its metrics Service
        (job = the Service's name, as a ServiceMonitor would set it)."""
        self.kubectl("apply", "-f", "-", stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "monitoring"}},
            {"apiVersion": "v1", "kind": "ServiceAccount",
             "metadata": {"name": "prometheus", "namespace": "monitoring"}},
            {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
             "metadata": {"name": "scenarios-prometheus"},
             "rules": [{"apiGroups": [""], "resources": ["pods", "services", "endpoints"],
                        "verbs": ["list", "watch"]},
                       {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"],
                        "verbs": ["list", "watch"]}]},
            {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
             "metadata": {"name": "scenarios-prometheus"},
             "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                         "name": "scenarios-prometheus"},
             "subjects": [{"kind": "ServiceAccount", "name": "prometheus", "namespace": "monitoring"}]},
        ]}))
        self.wait("ServiceAccount monitoring/prometheus", 60, lambda: (
            self.kubectl("-n", "monitoring", "get", "sa", "prometheus", check=False).returncode == 0, None))
        kubeconfig = os.path.join(self.dir, "prometheus.kubeconfig")
        res = run(["bash", os.path.join(SOURCE_DIR, "tests", "testbin", "control-plane.sh"),
                   "sa-kubeconfig", self.dir, "monitoring", "prometheus", kubeconfig])
        self.assertEqual(res.returncode, 0, res.stderr)
        return f"""global: {{scrape_interval: 1s, scrape_timeout: 1s}}
scrape_configs:
- job_name: kubernetes-pods
  kubernetes_sd_configs: [{{role: pod, kubeconfig_file: {kubeconfig}, namespaces: {{names: [{JOBS_NS}]}}}}]
  relabel_configs:
  - {{source_labels: [__meta_kubernetes_pod_annotation_prometheus_io_scrape], action: keep, regex: "true"}}
  - source_labels: [__address__, __meta_kubernetes_pod_annotation_prometheus_io_port]
    action: replace
    regex: '([^:]+)(?::\\d+)?;(\\d+)'
    replacement: '$1:$2'
    target_label: __address__
  - {{source_labels: [__meta_kubernetes_pod_annotation_prometheus_io_path], regex: (.+), target_label: __metrics_path__}}
  - {{source_labels: [__meta_kubernetes_namespace], target_label: namespace}}
  - {{source_labels: [__meta_kubernetes_pod_name], target_label: pod}}
- job_name: kubernetes-service-endpoints
  kubernetes_sd_configs: [{{role: endpoints, kubeconfig_file: {kubeconfig}, namespaces: {{names: [{OPERATOR_NS}]}}}}]
  relabel_configs:
  - {{source_labels: [__meta_kubernetes_service_name], action: keep, regex: "{OPERATOR}-metrics"}}
  - {{source_labels: [__meta_kubernetes_endpoint_port_name], action: keep, regex: metrics}}
  - {{source_labels: [__meta_kubernetes_service_name], target_label: job}}
  - {{source_labels: [__meta_kubernetes_pod_name], target_label: pod}}
"""

    def test_d_prometheus_discovers_and_scrapes_pods_for_every_dashboard_query(self):
        self.require_operator()
        name = "metrics"
        # Long enough to be scraped many times; a job that fails gives the failure panel data.
        self.apply_job(name, TOY_CONFIG, ["--cfg-options", "train_cfg.max_epochs=2000",
                                          "train_cfg.val_interval=100000",
                                          "default_hooks.checkpoint.interval=-1"])
        self.apply_job("fails", "configs/no/such/config.yaml", backoff_limit=0)
        prom_dir = os.path.join(self.dir, "prometheus")
        os.makedirs(prom_dir)
        with open(os.path.join(prom_dir, "prometheus.yml"), "w") as f:
            f.write(self.prometheus_config())
        port = run([sys.executable, "-c", "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); "
                    "print(s.getsockname()[1])"], check=True).stdout.strip()
        with open(os.path.join(prom_dir, "prometheus.log"), "w") as out:
            # Upstream Prometheus from tests/cluster/build.sh: Debian's is built without
            # Kubernetes service discovery.
            prom = subprocess.Popen(
                [os.path.join(self.env["CACHE"], "bin", "prometheus"),
                 f"--config.file={prom_dir}/prometheus.yml",
                 f"--storage.tsdb.path={prom_dir}/tsdb", f"--web.listen-address=127.0.0.1:{port}",
                 "--log.level=warn"], stdout=out, stderr=subprocess.STDOUT)
        self.addCleanup(lambda: (prom.terminate(), prom.wait(timeout=30)))

        def query(expr):
            url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
            try:
                with urllib.request.urlopen(url, timeout=5) as r:
                    answer = json.load(r)
            except OSError:
                return None
            return answer["data"]["result"] if answer.get("status") == "success" else None

        def targets_up():
            up = query('up == 1') or []
            jobs = sorted((r["metric"].get("job"), r["metric"].get("pod", "")) for r in up)
            pods = {p for j, p in jobs if j == "kubernetes-pods"}
            steps = query(f'rate(ddp3d_train_steps_total{{job_name="{name}"}}[1m]) > 0') or []
            failed = query("ddp3d_operator_jobs_failed_total") or []
            ok = ({f"{name}-node-0", f"{name}-node-1"} <= pods and len(steps) == 2
                  and ("ddp3d-operator-metrics" in {j for j, _ in jobs}) and failed)
            return ok, jobs
        t0 = time.monotonic()
        try:
            jobs = self.wait("Prometheus scraping both ranks and the operator over the pod network",
                             180, targets_up, interval=1)
        except AssertionError:
            with open(os.path.join(prom_dir, "prometheus.log")) as f:
                raise AssertionError(f"prometheus.log:\n{f.read()[-3000:]}\n{self.describe(name)}")
        log(f"Prometheus: targets up after {time.monotonic() - t0:.1f}s: {jobs}")
        time.sleep(3)  # a few more scrapes for every rate() window

        charts = os.path.join(SOURCE_DIR, "charts", "ddp3d", "dashboards")
        for dashboard in ("training.json", "operator.json"):
            with open(os.path.join(charts, dashboard)) as f:
                panels = json.load(f)["panels"]
            for panel in panels:
                for target in panel.get("targets", []):
                    expr = target["expr"].replace("$job_name", name)
                    result = query(expr)
                    self.assertTrue(result, f"{dashboard} {panel['title']!r}: no data for {expr}")
                    log(f"{dashboard:14} {panel['title']:34} " + ", ".join(
                        f"{r['value'][1]}" for r in result)[:80])
        self.kubectl("-n", JOBS_NS, "delete", "trainingjob", name, "fails", "--wait=false")

    # -- the Prometheus Operator -----------------------------------------------------------
    def cluster_versions(self):
        out = run(["bash", "-c", f"source {CLUSTER}/versions.sh && echo $PROMETHEUS_IMAGE "
                   "$PROMETHEUS_VERSION $PROMETHEUS_OPERATOR_VERSION"], check=True).stdout.split()
        return dict(zip(("image", "version", "operator"), out))

    def test_e_prometheus_operator_consumes_chart_monitors_and_alerts_fire(self):
        self.require_operator()
        versions = self.cluster_versions()
        stall, crash = "stall", "crashloop"
        # A long run whose rank 1 is stopped later. Heartbeats off: rank 0 must stay blocked
        # in its all-reduce (as in a hung collective), not end with PeerLost.
        self.apply_job(stall, TOY_CONFIG, ["--cfg-options", "train_cfg.max_epochs=100000",
                                           "train_cfg.val_interval=100000",
                                           "default_hooks.checkpoint.interval=-1",
                                           "env_cfg.dist_cfg.heartbeat_timeout=0"])
        t0 = time.monotonic()
        res = run(["bash", os.path.join(CLUSTER, "prometheus_operator.sh"), self.dir])
        self.assertEqual(res.returncode, 0, res.stderr[-3000:])
        log(f"prometheus_operator.sh -> operator healthy: {time.monotonic() - t0:.1f}s")

        # The chart's monitors and rules with kube-prometheus-stack's selector label, alert
        # windows of seconds instead of minutes.
        label = "release=kube-prometheus-stack"
        res = run([self.helm, "--kubeconfig", self.kubeconfig, "upgrade", RELEASE,
                   os.path.join(SOURCE_DIR, "charts", "ddp3d"), "--namespace", OPERATOR_NS,
                   "--reuse-values", "--wait", "--timeout", "120s",
                   *[a for v in ("serviceMonitor.enabled=true", "serviceMonitor.interval=5s",
                                 f"serviceMonitor.labels.{label}", "prometheusRule.enabled=true",
                                 f"prometheusRule.labels.{label}",
                                 "prometheusRule.jobFailed.window=1m",
                                 "prometheusRule.gangRestartLoop.window=1m",
                                 "prometheusRule.trainingStalled.window=30s",
                                 "prometheusRule.trainingStalled.for=15s") for a in ("--set", v)]])
        self.assertEqual(res.returncode, 0, f"helm upgrade failed:\n{res.stderr}")

        ns, sa = "monitoring", "ddp3d-prometheus"
        selector = {"matchLabels": {"release": "kube-prometheus-stack"}}
        prometheus = {
            "apiVersion": "monitoring.coreos.com/v1", "kind": "Prometheus",
            "metadata": {"name": "ddp3d", "namespace": ns},
            "spec": {"image": versions["image"], "version": versions["version"], "replicas": 1,
                     "serviceAccountName": sa, "scrapeInterval": "5s", "evaluationInterval": "5s",
                     "serviceMonitorSelector": selector, "serviceMonitorNamespaceSelector": {},
                     "podMonitorSelector": selector, "podMonitorNamespaceSelector": {},
                     "ruleSelector": selector, "ruleNamespaceSelector": {},
                     "securityContext": {"runAsUser": 1000, "runAsGroup": 2000, "fsGroup": 2000,
                                         "runAsNonRoot": True,
                                         "seccompProfile": {"type": "RuntimeDefault"}}}}
        self.kubectl("apply", "-f", "-", stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
            {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": sa, "namespace": ns}},
            # Upstream's ClusterRole for a Prometheus (prometheus_operator.sh installs it).
            {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
             "metadata": {"name": sa},
             "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                         "name": "prometheus"},
             "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": ns}]},
            prometheus]}))
        self.addCleanup(lambda: self.kubectl("-n", ns, "delete", "prometheus", "ddp3d",
                                             "--wait=false", check=False))
        pod_name = "prometheus-ddp3d-0"  # the operator's StatefulSet prometheus-<name>

        def ready():
            res = self.kubectl("-n", ns, "get", "pod", pod_name, "-o", "json", check=False)
            if res.returncode != 0:
                return False, res.stderr.strip() or self.events(ns)
            pod = json.loads(res.stdout)
            conds = {c["type"]: c["status"] for c in pod["status"].get("conditions", [])}
            return conds.get("Ready") == "True", (pod["status"].get("phase"), [
                (c["name"], c.get("state")) for c in pod["status"].get("containerStatuses", [])])
        try:
            self.wait(f"Prometheus pod {ns}/{pod_name} Ready", 180, ready, interval=1)
        except AssertionError as e:
            log_tail = open(os.path.join(self.dir, "logs", "prometheus-operator.log")).read()[-3000:]
            raise AssertionError(f"{e}\n{self.events(ns)}\nprometheus-operator.log:\n{log_tail}") from None
        pod = self.get("-n", ns, "pod", pod_name)
        images = sorted(c["image"] for c in pod["spec"]["containers"])
        self.assertIn(versions["image"], images)
        self.assertTrue(any(i.startswith("ddp3d.local/prometheus-config-reloader:") for i in images), images)
        base = f"http://{pod['status']['podIP']}:9090/api/v1/"
        log(f"Prometheus CR -> pod {pod_name} Ready: {time.monotonic() - t0:.1f}s ({images})")

        def api(path):
            try:
                with urllib.request.urlopen(base + path, timeout=5) as r:
                    answer = json.load(r)
            except OSError as e:
                return None, str(e)
            return (answer["data"], None) if answer.get("status") == "success" else (None, answer)

        # The operator's Service through the ServiceMonitor, both ranks of the running job
        # through the PodMonitor, all scraped.
        def targets_up():
            data, err = api("targets?state=active")
            if data is None:
                return False, err
            up = {(t["scrapePool"], t["labels"].get("service") or t["labels"].get("pod"))
                  for t in data["activeTargets"] if t["health"] == "up"}
            want = {(f"serviceMonitor/{OPERATOR_NS}/{OPERATOR}/0", f"{OPERATOR}-metrics"),
                    (f"podMonitor/{OPERATOR_NS}/{RELEASE}-workers/0", f"{stall}-node-0"),
                    (f"podMonitor/{OPERATOR_NS}/{RELEASE}-workers/0", f"{stall}-node-1")}
            return want <= up, sorted(up)
        up = self.wait("the operator's Service and the workers' pods scraped", 120, targets_up, interval=1)
        log(f"targets up after {time.monotonic() - t0:.1f}s: {up}")

        with open(os.path.join(SOURCE_DIR, "charts", "ddp3d", "templates", "prometheusrule.yaml")) as f:
            chart_alerts = set(re.findall(r"- alert: (\w+)", f.read()))
        self.assertEqual(len(chart_alerts), 6, chart_alerts)

        def rules_loaded():
            data, err = api("rules?type=alert")
            if data is None:
                return False, err
            names = {r["name"] for g in data["groups"] for r in g["rules"]}
            return names == chart_alerts, names
        self.wait("the chart's 6 alerts loaded (PrometheusRule -> rule file)", 60, rules_loaded, interval=1)

        def alerts(name, **labels):
            data, _ = api("alerts")
            return [a for a in (data or {}).get("alerts", [])
                    if a["labels"].get("alertname") == name
                    and all(a["labels"].get(k) == v for k, v in labels.items())]

        def firing(name, **labels):
            found = alerts(name, **labels)
            return any(a["state"] == "firing" for a in found), found or None

        # The window of the restart and failure counters starts once Prometheus has scraped
        # the operator for a window (a series born later counts whole).
        self.wait("a minute of the operator's scrapes", 90, lambda: (
            bool((api("query?query=" + urllib.parse.quote("up offset 1m"))[0] or {}).get("result")), None))
        self.assertFalse(alerts("DDP3DTrainingStalled", job_name=stall), "stalled while training")

        # A worker that exits non-zero at once (a config that does not exist), 4 times.
        t1 = time.monotonic()
        self.apply_job(crash, "configs/no/such/config.yaml", backoff_limit=4)
        self.wait(f"DDP3DGangRestartLoop firing for {JOBS_NS}/{crash}", 180, lambda: firing(
            "DDP3DGangRestartLoop", trainingjob_namespace=JOBS_NS, trainingjob=crash), interval=1)
        log(f"crash-looping job -> DDP3DGangRestartLoop firing: {time.monotonic() - t1:.1f}s "
            f"(restarts {self.job_status(crash).get('restarts')})")
        self.wait_phase(crash, "Failed", 120)
        reason = next((c.get("reason") for c in self.job_status(crash).get("conditions", [])
                       if c["type"] == "Failed" and c["status"] == "True"), None)
        self.assertTrue(reason, self.job_status(crash))
        self.wait(f"DDP3DTrainingJobFailed firing ({reason})", 60, lambda: firing(
            "DDP3DTrainingJobFailed", reason=reason), interval=1)
        log(f"crash-looping job -> DDP3DTrainingJobFailed ({reason}) firing: {time.monotonic() - t1:.1f}s")

        # Rank 1 stopped (every process of its container): rank 0 waits in the all-reduce,
        # its /metrics still answers and its step counter stands still.
        victim = self.get("-n", JOBS_NS, "pod", f"{stall}-node-1")
        container = victim["status"]["containerStatuses"][0]["containerID"].split("://", 1)[1]
        ctr = [os.path.join(self.env["CACHE"], "bin", "ctr"), "--address",
               self.env["CONTAINERD_SOCK"], "--namespace", "k8s.io"]
        t2 = time.monotonic()
        res = run([*ctr, "tasks", "kill", "--all", "--signal", "SIGSTOP", container])
        self.assertEqual(res.returncode, 0, res.stderr)
        try:
            self.wait(f"DDP3DTrainingStalled firing for {stall}", 120, lambda: firing(
                "DDP3DTrainingStalled", job_name=stall), interval=1)
            log(f"rank 1 SIGSTOPped -> DDP3DTrainingStalled firing: {time.monotonic() - t2:.1f}s")
            # rank 0 is blocked, not gone: still scraped
            data, _ = api("query?query=" + urllib.parse.quote(
                f'up{{pod="{stall}-node-0"}} == 1'))
            self.assertTrue(data and data["result"], "rank 0's /metrics still answers")
        finally:
            self.kubectl("-n", JOBS_NS, "delete", "trainingjob", stall, crash, "--wait=false",
                         check=False)
            run([*ctr, "tasks", "kill", "--all", "--signal", "SIGKILL", container])
        log(f"scenario e total: {time.monotonic() - t0:.1f}s")

    def test_f_helm_uninstall_leaves_nothing(self):
        self.require_operator()
        # Deleting the jobs removes what the operator made for them (pods, headless
        # Services, rendezvous Secrets) through their ownerReferences: the
        # controller-manager's garbage collector, not the test.
        if getattr(type(self), "volume", None):
            self.kubectl("-n", JOBS_NS, "delete", "trainingjobs", "--all", "--wait=true",
                         "--timeout=120s")

            def collected():
                left = {kind: [o["metadata"]["name"] for o in self.get("-n", JOBS_NS, kind)["items"]
                               if o["metadata"].get("ownerReferences")]
                        for kind in ("pods", "services", "secrets")}
                return not any(left.values()), left
            self.wait("the jobs' pods, Services and Secrets garbage-collected", 120, collected)
        res = run([self.helm, "--kubeconfig", self.kubeconfig, "uninstall", RELEASE,
                   "--namespace", OPERATOR_NS, "--wait", "--timeout", "120s"])
        self.assertEqual(res.returncode, 0, f"helm uninstall failed:\n{res.stderr}")

        def gone():
            pods = self.operator_pods()
            rs = self.get("-n", OPERATOR_NS, "replicasets")["items"]
            return not pods and not rs, ([p["metadata"]["name"] for p in pods],
                                         [r["metadata"]["name"] for r in rs])
        self.wait("operator ReplicaSet and pods garbage-collected", 120, gone)

        ctr = os.path.join(self.env["CACHE"], "bin", "ctr")

        def no_container():
            res = run([ctr, "--address", self.env["CONTAINERD_SOCK"], "--namespace", "k8s.io",
                       "containers", "ls"])
            images = [line for line in res.stdout.splitlines() if "ddp3d/operator" in line]
            return res.returncode == 0 and not images, images or res.stderr
        self.wait("no operator container in containerd", 60, no_container)

        # No operator holds the Lease any more: SIGTERM makes it release the Lease (empty
        # holder), unless helm has already deleted the RBAC that lets it write the Lease (it
        # deletes the Role while the pod is still terminating); then the Lease simply is not
        # renewed and expires, and a new install's operator takes it.
        def not_held():
            res = self.kubectl("-n", OPERATOR_NS, "get", "lease", OPERATOR, "-o", "json", check=False)
            if res.returncode != 0:
                return True, "no Lease"
            spec = json.loads(res.stdout)["spec"]
            if not spec.get("holderIdentity"):
                return True, "released"
            renewed = calendar.timegm(time.strptime(spec["renewTime"][:19], "%Y-%m-%dT%H:%M:%S"))
            expired = time.time() > renewed + spec["leaseDurationSeconds"] + 1
            return expired, f"held by {spec['holderIdentity']}, renewed {spec['renewTime']}"
        how = self.wait("the operator's Lease released or expired", 60, not_held)
        log(f"after helm uninstall the Lease is {how}")

if __name__ == "__main__":
    unittest.main()
