"""What every scenario on the real test cluster (tests/cluster) shares: the cluster's life
(up.sh / down.sh), the dev images loaded into every node, kubectl and Helm, the operator's
install, and reading jobs, pods and logs.

A suite is a ClusterScenario subclass: `up_args` go to up.sh (e.g. ("--nodes", "3")),
`up_env` to its environment (e.g. CLUSTER_FEATURE_GATES). Needs root (tests/cluster). One
cluster per machine: ctest serialises the suites that start one (RESOURCE_LOCK ddp3d_cluster).
"""

import json
import os
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_DIR = os.environ.get("DDP3D_SOURCE_DIR", os.path.abspath(os.path.join(HERE, "..", "..", "..")))
CLUSTER = os.path.join(SOURCE_DIR, "tests", "cluster")
RELEASE, OPERATOR_NS = "ddp3d", "ddp3d-system"
OPERATOR = "ddp3d-operator"  # the chart's Deployment, ServiceAccount and the Lease's name
OPERATOR_IMAGE = "ddp3d/operator:dev"
WORKER_IMAGE = "ddp3d/worker:dev"
WORKER_UID = 10001  # the worker image's user (docker/worker-cpu.Dockerfile)
RESTRICTED = {"runAsNonRoot": True, "allowPrivilegeEscalation": False,
              "capabilities": {"drop": ["ALL"]}, "seccompProfile": {"type": "RuntimeDefault"}}


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, **kw)


def read_env(path):
    with open(path) as f:
        return dict(line.rstrip("\n").split("=", 1) for line in f if "=" in line)


def log(msg):
    print(msg, file=sys.stderr, flush=True)


class ClusterScenario(unittest.TestCase):
    up_args = ()
    up_env = {}
    jobs_ns = "train"

    @classmethod
    def setUpClass(cls):
        if os.geteuid() != 0:
            raise RuntimeError("the cluster scenarios need root (tests/cluster/up.sh)")
        cls.tmp = tempfile.TemporaryDirectory(prefix="ddp3d-scenarios-")
        cls.dir = os.path.join(cls.tmp.name, "c")
        t0 = time.monotonic()
        up = run(["bash", os.path.join(CLUSTER, "up.sh"), cls.dir, *cls.up_args],
                 env=dict(os.environ, CLUSTER_OWNER_PID=str(os.getpid()), **cls.up_env))
        if up.returncode != 0:
            cls.down()
            raise RuntimeError(f"up.sh failed:\n{up.stderr[-4000:]}")
        st = os.statvfs(cls.dir)
        log(f"\nup.sh {' '.join(cls.up_args)}: {time.monotonic() - t0:.1f}s "
            f"({st.f_bavail * st.f_frsize / 2**30:.1f} GiB free)")
        cls.kubeconfig = up.stdout.strip().splitlines()[-1]
        cls.env = read_env(os.path.join(cls.dir, "cluster.env"))
        cls.cp_env = read_env(os.path.join(cls.dir, "env"))
        try:
            cls.load_images()
            cls.helm = run(["bash", os.path.join(SOURCE_DIR, "tests", "testbin", "helm.sh")],
                           check=True).stdout.strip()
        except Exception:
            cls.down()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.down()
        cls.tmp.cleanup()

    @classmethod
    def down(cls):
        res = run(["bash", os.path.join(CLUSTER, "down.sh"), cls.dir])
        if res.returncode != 0:
            log(f"down.sh failed:\n{res.stderr[-2000:]}")

    @classmethod
    def load_images(cls):
        """The dev images (tools/build_images.sh) into every node's containerd."""
        t0 = time.monotonic()
        res = run(["bash", os.path.join(SOURCE_DIR, "tools", "build_images.sh"),
                   "--load-cluster", cls.dir],
                  env=dict(os.environ, CTR=os.path.join(cls.env["CACHE"], "bin", "ctr")))
        if res.returncode != 0:
            raise RuntimeError(f"tools/build_images.sh --load-cluster failed:\n{res.stderr[-4000:]}")
        log(f"images built/loaded: {time.monotonic() - t0:.1f}s")

    @classmethod
    def node_sh(cls, *args, check=True):
        res = run(["bash", os.path.join(CLUSTER, "node.sh"), cls.dir, *args])
        if check and res.returncode != 0:
            raise AssertionError(f"node.sh {' '.join(args)} failed:\n{res.stderr[-3000:]}")
        return res

    @classmethod
    def kubectl(cls, *args, check=True, stdin=None):
        res = run(["kubectl", "--kubeconfig", cls.kubeconfig, *args], input=stdin,
                  env=dict(os.environ, KUBECACHEDIR=os.path.join(cls.dir, "kube-cache")))
        if check and res.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed:\n{res.stderr}")
        return res

    @classmethod
    def get(cls, *args):
        return json.loads(cls.kubectl("get", "-o", "json", *args).stdout)

    def wait(self, what, seconds, probe, interval=0.5):
        deadline = time.monotonic() + seconds
        last = None
        while time.monotonic() < deadline:
            ok, last = probe()
            if ok:
                return last
            time.sleep(interval)
        self.fail(f"{what} not reached after {seconds}s; last: {last}")

    def events(self, namespace):
        return self.kubectl("-n", namespace, "get", "events", "--sort-by=.lastTimestamp",
                            check=False).stdout[-3000:]

    def operator_pods(self):
        return self.get("-n", OPERATOR_NS, "pods", "-l", "app.kubernetes.io/component=operator")["items"]

    def install_operator(self, *sets):
        """`helm install` of the chart with the dev operator image (`sets`: more --set
        values); returns the operator pod once Ready."""
        extra = [a for s in sets for a in ("--set", s)]
        res = run([self.helm, "--kubeconfig", self.kubeconfig, "install", RELEASE,
                   os.path.join(SOURCE_DIR, "charts", "ddp3d"), "--namespace", OPERATOR_NS,
                   "--create-namespace", "--set", "image.repository=ddp3d/operator",
                   "--set", "image.tag=dev", "--set", "image.pullPolicy=IfNotPresent", *extra])
        self.assertEqual(res.returncode, 0, f"helm install failed:\n{res.stderr}")

        def ready():
            pods = self.operator_pods()
            for p in pods:
                conds = {c["type"]: c["status"] for c in p["status"].get("conditions", [])}
                if conds.get("Ready") == "True":
                    return True, p
            return False, [(p["metadata"]["name"], p["status"].get("phase"),
                            [c.get("state") for c in p["status"].get("containerStatuses", [])])
                           for p in pods] or self.events(OPERATOR_NS)
        try:
            return self.wait("the operator pod Ready (readiness probe /readyz)", 180, ready)
        except AssertionError as e:
            raise AssertionError(f"{e}\n{self.nodes_state()}\n{self.events(OPERATOR_NS)}") from None

    def nodes_state(self):
        """Each node's conditions that are not as they should be, its taints and free disk:
        why a pod stays Pending without a container (e.g. DiskPressure on a shared disk)."""
        lines = []
        for n in self.get("nodes")["items"]:
            healthy = {"Ready": "True"}
            bad = [f"{c['type']}={c['status']} ({c.get('reason', '')}: {c.get('message', '')})"
                   for c in n["status"].get("conditions", [])
                   if c["status"] != healthy.get(c["type"], "False")]
            taints = [f"{t['key']}:{t['effect']}" for t in n["spec"].get("taints", [])]
            lines.append(f"node {n['metadata']['name']}: conditions {bad or 'healthy'}, "
                         f"taints {taints or 'none'}")
        st = os.statvfs(self.dir)
        lines.append(f"free disk under {self.dir}: {st.f_bavail * st.f_frsize / 2**30:.1f} GiB")
        return "\n".join(lines)

    # -- jobs ----------------------------------------------------------------------------
    def job_status(self, name):
        return self.get("-n", self.jobs_ns, "trainingjob", name).get("status") or {}

    def pod_logs(self, pod, previous=False):
        res = self.kubectl("-n", self.jobs_ns, "logs", pod, *(["--previous"] if previous else []),
                           check=False)
        return res.stdout if res.returncode == 0 else f"(kubectl logs {pod}: {res.stderr.strip()})"

    def wait_log(self, pod, text, what, seconds, interval):
        """Waits until `pod`'s log (kubectl logs) holds `text`."""
        def seen():
            out = self.pod_logs(pod)
            return text in out, out[-500:]
        self.wait(what, seconds, seen, interval=interval)

    def describe(self, name):
        out = [f"status: {json.dumps(self.job_status(name), indent=1)}"]
        pods = self.get("-n", self.jobs_ns, "pods")["items"]
        for p in pods:
            if p["metadata"]["name"].startswith(name + "-"):
                out.append(f"--- {p['metadata']['name']} {p['status'].get('phase')} "
                           f"on {p['spec'].get('nodeName')}\n"
                           + self.pod_logs(p["metadata"]["name"])[-2500:])
        operator = self.operator_pods()
        if operator:
            out.append("--- operator\n" + self.kubectl("-n", OPERATOR_NS, "logs",
                                                        operator[0]["metadata"]["name"],
                                                        check=False).stdout[-2500:])
        out.append("--- events\n" + self.events(self.jobs_ns))
        out.append("--- nodes\n" + self.nodes_state())
        return "\n".join(out)

    def wait_in_job(self, name, what, seconds, probe, interval=0.5):
        """`wait` for something job `name` does: fails at once if the job Failed, and
        describes the job (status, pods' logs, events, nodes) when it fails."""
        def checked():
            ok, last = probe()
            if not ok and self.job_status(name).get("phase") == "Failed":
                raise AssertionError(f"job {name} Failed before {what}")
            return ok, last
        try:
            return self.wait(what, seconds, checked, interval=interval)
        except AssertionError as e:
            raise AssertionError(f"{e}\n{self.describe(name)}") from None

    def wait_phase(self, name, phase, seconds):
        def reached():
            status = self.job_status(name)
            if status.get("phase") == "Failed" and phase != "Failed":
                raise AssertionError(f"job {name} Failed\n{self.describe(name)}")
            return status.get("phase") == phase, status.get("phase")
        try:
            return self.wait(f"job {name} {phase}", seconds, reached, interval=1)
        except AssertionError as e:
            raise AssertionError(f"{e}\n{self.describe(name)}") from None
