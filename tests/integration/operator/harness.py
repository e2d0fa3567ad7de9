"""Fixtures for the operator integration tests: a real control plane with the CRD and the
chart's RBAC applied, the operator binary running as the chart's ServiceAccount, and a
"kubelet" that writes pod status through the API."""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.request

SOURCE_DIR = os.environ.get(
    "DDP3D_SOURCE_DIR",
    os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..")))
BINARY_DIR = os.environ.get("DDP3D_BINARY_DIR", os.path.join(SOURCE_DIR, "build"))
OPERATOR = os.path.join(BINARY_DIR, "operator", "ddp3d-operator")
sys.path.insert(0, os.path.join(SOURCE_DIR, "tests", "testbin"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from controlplane import ControlPlane  # noqa: E402
from kube_rest import Kube  # noqa: E402

NS = "ml"                   # where the TrainingJobs live
SYSTEM_NS = "ddp3d-system"  # the chart's release namespace (ServiceAccount, Lease)
RELEASE = "ddp3d"
SERVICE_ACCOUNT = "ddp3d-operator"
CONFIG = "configs/pointpillars/pointpillars_hv_secfpn_8xb6-160e_kitti-3d-car.yaml"
# kube-apiserver flags that serve the PodGroup API of Kubernetes 1.36 (alpha).
POD_GROUP_API = {"APISERVER_FEATURE_GATES": "GenericWorkload=true",
                 "APISERVER_RUNTIME_CONFIG": "scheduling.k8s.io/v1alpha2=true"}


def wait_for(fn, timeout=30.0, what="condition", interval=0.2):
    """Polls fn() until it returns something truthy; returns it or fails naming `what`."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = fn()
            if last:
                return last
        except Exception as e:  # a transient API error while polling is not the answer
            last = e
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what} (last: {last!r})")


def holds_for(check, duration, what="condition", interval=0.05):
    """Asserts that check() holds throughout `duration` seconds, failing at the first moment
    it does not. A claim that something does *not* happen can only be checked over a window;
    this checks it all through the window rather than once after a sleep."""
    deadline = time.monotonic() + duration
    while True:
        value = check()
        if not value:
            raise AssertionError(f"{what} stopped holding (got {value!r})")
        if time.monotonic() >= deadline:
            return value
        time.sleep(interval)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def helm_path():
    res = subprocess.run(["bash", os.path.join(SOURCE_DIR, "tests", "testbin", "helm.sh")],
                         capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"tests/testbin/helm.sh failed:\n{res.stderr}")
    return res.stdout.strip().splitlines()[-1]


class Cluster:
    """Control plane + CRD + the chart's RBAC + a ServiceAccount kubeconfig.
    `helm_set`: extra `--set` values for the chart (e.g. rbac.scope=namespace);
    `namespaces`: namespaces created beside the release's."""

    def __init__(self, helm_set=(), namespaces=(NS,), pod_groups=True):
        self.tmp = tempfile.mkdtemp(prefix="ddp3d-op-it-")
        # The PodGroup API (scheduling.k8s.io/v1alpha2, gang placement) is served unless
        # pod_groups is False: the operator's path on a cluster that has it.
        self.cp = ControlPlane(os.path.join(self.tmp, "cp"), POD_GROUP_API if pod_groups else None)
        self.helm_set = list(helm_set)
        self.namespaces = list(namespaces)

    def start(self):
        self.cp.start()
        self.kube = Kube(self.cp.env)
        self.cp.kubectl("apply", "-f", os.path.join(SOURCE_DIR, "crds"), check=True)
        self.cp.wait_established("trainingjobs.ddp3d.io")
        for ns in (*self.namespaces, SYSTEM_NS):
            self.cp.script("create-namespace", ns)
        # The chart's ServiceAccount, ClusterRole(+Binding) and leader-election Role, exactly
        # as `helm install` would create them (without the `helm test` hooks, which install
        # does not create either).
        sets = [a for v in ["leaderElection.enabled=true", *self.helm_set] for a in ("--set", v)]
        rendered = subprocess.run(
            [helm_path(), "template", RELEASE, os.path.join(SOURCE_DIR, "charts", "ddp3d"),
             "-n", SYSTEM_NS, "--skip-tests", *sets],
            capture_output=True, text=True, check=True).stdout
        self.cp.kubectl("apply", "-f", "-", stdin=rendered, check=True)  # objects name their namespaces
        self.sa_kubeconfig = os.path.join(self.tmp, "operator.kubeconfig")
        self.cp.script("sa-kubeconfig", SYSTEM_NS, SERVICE_ACCOUNT, self.sa_kubeconfig)
        return self

    def stop(self):
        """Stops the control plane and removes its folder (etcd's data, logs: 70 MB a suite)."""
        self.cp.stop()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def requests_by(self, username=f"system:serviceaccount:{SYSTEM_NS}:{SERVICE_ACCOUNT}"):
        """What `username` asked the API server, from its audit log: one dict per request
        (verb, group, resource such as "pods" or "trainingjobs/status", namespace, name,
        code, uri), oldest first. A watch is logged at ResponseStarted and again only when
        it ends, so each request's latest stage stands for it."""
        by_id = {}
        with open(os.path.join(self.cp.dir, "audit.log")) as f:
            for line in f:
                e = json.loads(line)
                if e.get("user", {}).get("username") != username:
                    continue
                ref = e.get("objectRef", {})
                resource = ref.get("resource", "")
                if ref.get("subresource"):
                    resource += "/" + ref["subresource"]
                by_id[e["auditID"]] = {
                    "verb": e["verb"], "group": ref.get("apiGroup", ""), "resource": resource,
                    "namespace": ref.get("namespace", ""), "name": ref.get("name", ""),
                    "uri": e.get("requestURI", ""),
                    "code": e.get("responseStatus", {}).get("code", 0)}
        return list(by_id.values())  # dicts keep insertion order: first stage seen


class OperatorLogOnFailure:
    """Mixin for a TestCase whose class holds the operator as `op`: a failing test prints
    the tail of its log, the first thing one needs."""

    def run(self, result=None):
        res = super().run(result)
        if res and (res.failures or res.errors):
            sys.stderr.write(f"\n--- operator log (tail) ---\n{self.op.logs()[-6000:]}\n")
        return res


class OperatorSuite(OperatorLogOnFailure, unittest.TestCase):
    """A control plane (Cluster(**cluster_args)), one operator replica `operator_name` as the
    chart's ServiceAccount, and the kubelet stand-in, shared by a TestCase's tests."""
    cluster_args = {}
    operator_name = "op-a"

    @classmethod
    def setUpClass(cls):
        cls.cluster = Cluster(**cls.cluster_args).start()
        cls.kube = cls.cluster.kube
        cls.kubelet = Kubelet(cls.kube)
        cls.op = Operator(cls.cluster, cls.operator_name)

    @classmethod
    def tearDownClass(cls):
        cls.op.stop()
        cls.cluster.stop()

    def job(self, name):
        return self.kube.get(Kube.tj(NS, name))


class Operator:
    """One ddp3d-operator process (a replica), as the chart's ServiceAccount."""

    def __init__(self, cluster, name, leader_elect=True, extra=(), kubeconfig=None):
        self.cluster = cluster
        self.name = name
        self.metrics_port = free_port()
        self.health_port = free_port()
        self.log_path = os.path.join(cluster.tmp, f"{name}.log")
        args = [OPERATOR, "--kubeconfig", kubeconfig or cluster.sa_kubeconfig,
                "--metrics-address", f"127.0.0.1:{self.metrics_port}",
                "--health-address", f"127.0.0.1:{self.health_port}",
                "--leader-election-namespace", SYSTEM_NS, "--workers", "2", *extra]
        if leader_elect:
            args.append("--leader-elect")
        env = dict(os.environ, POD_NAME=name, POD_NAMESPACE=SYSTEM_NS, DDP3D_LOG_LEVEL="debug")
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT, env=env)

    def http(self, port, path):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def metric(self, name, labels=""):
        """Value of one sample on /metrics (None when absent)."""
        _, body = self.http(self.metrics_port, "/metrics")
        want = name + (("{" + labels + "}") if labels else "")
        for line in body.splitlines():
            if line.startswith(want + " "):
                return float(line.split()[-1])
        return None

    def ready(self):
        try:
            return self.http(self.health_port, "/readyz")[0] == 200
        except OSError:
            return False

    def threads(self):
        """How many threads the process has now (/proc/<pid>/task)."""
        return len(os.listdir(f"/proc/{self.proc.pid}/task"))

    def logs(self):
        with open(self.log_path) as f:
            return f.read()

    def kill(self, sig=signal.SIGKILL):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        return self.proc.wait(timeout=30)

    def stop(self):
        if self.proc.poll() is None:
            self.kill(signal.SIGTERM)
        self.log.close()


class StallingProxy:
    """A TCP proxy in front of the API server that can start stalling: from stall() on it
    still accepts connections but forwards nothing either way, and keeps every connection
    open. To the operator behind it the API server has gone silent (no reset, no error)."""

    def __init__(self, target_port):
        self.target_port = target_port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.stalled = threading.Event()
        self.closed = threading.Event()
        self.sockets = []
        threading.Thread(target=self._accept, daemon=True).start()

    def kubeconfig(self, original, path):
        """A copy of kubeconfig `original` whose server is this proxy (same host, so TLS
        verification is unchanged)."""
        with open(original) as f:
            text = f.read()
        text, n = re.subn(r"server: https://127\.0\.0\.1:\d+",
                          f"server: https://127.0.0.1:{self.port}", text)
        assert n == 1, f"no server line in {original}"
        with open(path, "w") as f:
            f.write(text)
        return path

    def stall(self):
        self.stalled.set()

    def close(self):
        self.closed.set()
        for s in [self.listener] + self.sockets:
            try:
                s.close()
            except OSError:
                pass

    def _accept(self):
        while not self.closed.is_set():
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            self.sockets.append(client)
            if self.stalled.is_set():
                continue  # held open, never answered
            upstream = socket.create_connection(("127.0.0.1", self.target_port))
            self.sockets.append(upstream)
            for src, dst in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(src, dst), daemon=True).start()

    def _pump(self, src, dst):
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    dst.shutdown(socket.SHUT_WR)
                    return
                if self.stalled.is_set():
                    self.closed.wait()  # swallow it and hold the connection
                    return
                dst.sendall(data)
        except OSError:
            return


class Kubelet:
    """Plays the kubelet: writes pod status (phase, container state) through the API."""

    def __init__(self, kube):
        self.kube = kube

    def _status(self, pod, phase, state, ready):
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        containers = pod["spec"]["containers"]
        return {"status": {
            "phase": phase,
            "startTime": now,
            "containerStatuses": [{
                "name": c["name"], "image": c.get("image", ""), "imageID": "",
                "ready": ready, "restartCount": 0, "state": state(now)} for c in containers],
        }}

    def set_running(self, pod):
        self._patch(pod, self._status(pod, "Running",
                                      lambda now: {"running": {"startedAt": now}}, True))

    def set_terminated(self, pod, exit_code):
        phase = "Succeeded" if exit_code == 0 else "Failed"
        reason = "Completed" if exit_code == 0 else "Error"
        self._patch(pod, self._status(pod, phase, lambda now: {"terminated": {
            "exitCode": exit_code, "reason": reason, "startedAt": now, "finishedAt": now}},
            False))

    def _patch(self, pod, body):
        meta = pod["metadata"]
        self.kube.merge_patch(Kube.core(meta["namespace"], "pods", meta["name"], "status"), body)


def training_job(name, nnodes=2, gpus=1, elastic=None, **run_policy):
    job = {
        "apiVersion": "ddp3d.io/v1alpha1", "kind": "TrainingJob",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"nnodes": nnodes, "gpusPerNode": gpus, "port": 29500, "config": CONFIG,
                 "args": ["--work-dir", f"/data/work_dirs/{name}"],
                 "image": "ddp3d/worker:test", "runPolicy": run_policy},
    }
    if elastic is not None:
        job["spec"]["elastic"] = elastic
    return job


def pods_of(kube, job):
    """Rank pods controlled by this TrainingJob object, sorted by rank (no grow probes)."""
    uid = job["metadata"]["uid"]
    pods = [p for p in kube.list(Kube.core(NS, "pods"), "ddp3d.io/job-name,ddp3d.io/node-rank")
            if any(r.get("uid") == uid and r.get("controller")
                   for r in p["metadata"].get("ownerReferences", []))]
    return sorted(pods, key=lambda p: int(p["metadata"]["labels"]["ddp3d.io/node-rank"]))
