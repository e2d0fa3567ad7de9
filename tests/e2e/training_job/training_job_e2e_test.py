"""Whole-system test: TrainingJob -> ddp3d-operator -> pods -> real DDP workers -> status.

Real parts only: etcd + kube-apiserver (tests/testbin, RBAC on), the CRD from crds/, the Helm
chart's ServiceAccount/ClusterRole/Role rendered by the real helm, the built
`ddp3d-operator` started with the flags the chart's Deployment passes and authenticated as
the chart's ServiceAccount, and the built `ddp3d` worker. The pods run on netns_kubelet.py,
which plays scheduler + kubelet + DNS: every pod in its own network namespace with its own
IP, resolving its peers by their headless-Service DNS names. Rendezvous therefore only works
if the operator's MASTER_ADDR, Service and hostname/subdomain are right: the ranks share no
loopback and no host name.

Scenarios: a 2-node CPU job (`tools/dist_train.sh` -> `ddp3d train` on the toy config) runs
to Succeeded with world size 2 and a falling loss; a rank SIGKILLed mid-training fails its
pod with exit code 137 and the operator restarts the whole group (attempt + 1, restarts + 1),
which resumes from the newest checkpoint and succeeds; the operator's identity is the
chart's ServiceAccount and nothing more. Needs root (network namespaces). docs/e2e.md.
"""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_DIR = os.environ.get("DDP3D_SOURCE_DIR", os.path.abspath(os.path.join(HERE, "..", "..", "..")))
BINARY_DIR = os.environ.get("DDP3D_BINARY_DIR", os.path.join(SOURCE_DIR, "build"))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(SOURCE_DIR, "tests", "testbin"))
from controlplane import ControlPlane  # noqa: E402
from kube_api import KubeApi  # noqa: E402
from netns_kubelet import NetnsKubelet, die_with_parent  # noqa: E402
from pod_network import netns_supported  # noqa: E402

OPERATOR_BIN = os.path.join(BINARY_DIR, "operator", "ddp3d-operator")
DDP3D_BIN = os.path.join(BINARY_DIR, "worker", "ddp3d")
RELEASE, OPERATOR_NS, JOBS_NS = "ddp3d", "ddp3d-system", "e2e"
OPERATOR_SA = "ddp3d-operator"
RBAC_KINDS = {"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"}
SCENARIO_TIMEOUT_S = 120

# What every rank runs: the operator's default pod command, `bash tools/dist_train.sh
# <config> <gpusPerNode> <args>` from the image's WORKDIR (the source tree here), i.e.
# `ddp3d launch ... -- ddp3d train <config> --seed 0 --launcher pytorch <args>`.
TOY_CONFIG = "configs/toy/toy_regression_2proc.yaml"
RANK_SUBCOMMAND = "train"  # argv[1] of a rank process (the launcher's is "launch")
LOSS = re.compile(r"Epoch\(train\) \[(\d+)\]\[\s*(\d+)/\d+\].* loss: ([0-9.eE+-]+)")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def env_port(pod):
    return next(e["value"] for e in pod["spec"]["containers"][0]["env"] if e["name"] == "PORT")


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, **kw)


def wait_until(predicate, timeout_s, what, interval_s=0.1):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval_s)
    raise AssertionError(f"timed out after {timeout_s}s waiting for {what}")


class JobPhaseRecorder:
    """Records every TrainingJob status the API server publishes (a real watch), so that a
    short-lived phase such as Running cannot be missed between two polls."""

    def __init__(self, api, namespace):
        self.api, self.ns = api, namespace
        self.seen = []  # (job name, phase, restarts)
        self.statuses = []  # (job name, full status) of every event
        self.last_error = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def start(self):
        self._thread.start()
        return self

    def stop(self):
        self._stop.set()
        self._thread.join(timeout=15)

    def phases(self, name):
        return [p for n, p, _ in list(self.seen) if n == name]

    def _loop(self):
        path = f"/apis/ddp3d.io/v1alpha1/namespaces/{self.ns}/trainingjobs"
        rv = None
        while not self._stop.is_set():
            if rv is None:  # (re)list; the CRD's storage may still be initializing
                try:
                    rv = self.api.get(path)["metadata"]["resourceVersion"]
                except Exception as e:  # noqa: BLE001
                    self.last_error = f"{type(e).__name__}: {e}"
                    time.sleep(0.2)
                    continue
            url = f"{self.api.base}{path}?watch=1&resourceVersion={rv}&timeoutSeconds=2"
            try:
                with urllib.request.urlopen(url, context=self.api.ctx, timeout=10) as resp:
                    for line in resp:
                        event = json.loads(line)
                        obj = event["object"]
                        if event["type"] == "ERROR":  # e.g. 410 Gone: list again
                            rv = None
                            break
                        rv = obj["metadata"]["resourceVersion"]
                        status = obj.get("status") or {}
                        self.statuses.append((obj["metadata"]["name"], status))
                        entry = (obj["metadata"]["name"], status.get("phase"), status.get("restarts", 0))
                        if not self.seen or self.seen[-1] != entry:
                            self.seen.append(entry)
            except Exception as e:  # noqa: BLE001 — a dropped watch is resumed from rv
                self.last_error = f"{type(e).__name__}: {e}"
                time.sleep(0.2)


class TrainingJobEndToEndTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if os.geteuid() != 0 or not netns_supported():
            raise RuntimeError("the e2e suite needs root and network namespaces "
                               "(ip netns add); docs/e2e.md explains why there is no fallback")
        for path in (OPERATOR_BIN, DDP3D_BIN):
            if not os.access(path, os.X_OK):
                raise RuntimeError(f"{path} not built: cmake --build build --target ddp3d ddp3d-operator")
        cls.tmp = tempfile.mkdtemp(prefix="ddp3d-e2e-")
        cls.addClassCleanup(run, ["rm", "-rf", cls.tmp])
        cls.cp = ControlPlane(os.path.join(cls.tmp, "cp")).start()
        cls.addClassCleanup(cls.cp.stop)
        cls.api = KubeApi(cls.cp.env)
        cls.cp.kubectl("apply", "-f", os.path.join(SOURCE_DIR, "crds"), check=True)
        for ns in (OPERATOR_NS, JOBS_NS):
            cls.cp.script("create-namespace", ns)
        cls.operator_args = cls._install_chart_rbac()
        cls.operator_kubeconfig = cls.cp.script(
            "sa-kubeconfig", OPERATOR_NS, OPERATOR_SA, os.path.join(cls.tmp, "operator.kubeconfig"))
        wait_until(lambda: cls.cp.kubectl("get", "crd", "trainingjobs.ddp3d.io", "-o",
                                          "jsonpath={.status.conditions[?(@.type=='Established')].status}")
                   .stdout == "True", 30, "the CRD to be established")
        cls.recorder = JobPhaseRecorder(cls.api, JOBS_NS).start()
        cls.addClassCleanup(cls.recorder.stop)
        cls._start_operator()
        cls.kubelet = NetnsKubelet(cls.api, JOBS_NS, SOURCE_DIR, DDP3D_BIN,
                                   os.path.join(cls.tmp, "pod-logs"))
        cls.kubelet.start()
        cls.addClassCleanup(cls.kubelet.stop)

    @classmethod
    def _install_chart_rbac(cls):
        """Applies the chart's RBAC objects; returns the operator args its Deployment passes."""
        helm = run(["bash", os.path.join(SOURCE_DIR, "tests", "testbin", "helm.sh")])
        if helm.returncode != 0:
            raise RuntimeError(f"helm.sh failed:\n{helm.stderr}")
        rendered = run([helm.stdout.strip(), "template", RELEASE, os.path.join(SOURCE_DIR, "charts", "ddp3d"),
                        "--namespace", OPERATOR_NS, "--set", f"watchNamespaces={{{JOBS_NS}}}",
                        "--skip-tests"])  # the chart's `helm test` objects are not the operator's
        if rendered.returncode != 0:
            raise RuntimeError(f"helm template failed:\n{rendered.stderr}")
        as_json = cls.cp.kubectl("create", "--dry-run=client", "-o", "json", "-f", "-",
                                 stdin=rendered.stdout, check=True)
        items, text, decoder = [], as_json.stdout.strip(), json.JSONDecoder()
        while text:  # one JSON document per object, back to back
            obj, end = decoder.raw_decode(text)
            items += obj.get("items", [obj])
            text = text[end:].lstrip()
        rbac = [o for o in items if o["kind"] in RBAC_KINDS]
        cls.assert_kinds = sorted(o["kind"] for o in rbac)
        cls.cp.kubectl("apply", "-f", "-", stdin=json.dumps({"apiVersion": "v1", "kind": "List",
                                                           "items": rbac}), check=True)
        deployment = next(o for o in items if o["kind"] == "Deployment")
        container = deployment["spec"]["template"]["spec"]["containers"][0]
        cls.chart_container = container
        return list(container.get("args", []))

    @classmethod
    def _start_operator(cls):
        cls.metrics_port, cls.health_port = free_port(), free_port()
        # The chart's flags verbatim, except the listen addresses: fixed ports in a pod,
        # free loopback ports here.
        args = [a for a in cls.operator_args
                if not a.startswith(("--metrics-address", "--health-address"))]
        args += [f"--metrics-address=127.0.0.1:{cls.metrics_port}",
                 f"--health-address=127.0.0.1:{cls.health_port}",
                 f"--kubeconfig={cls.operator_kubeconfig}"]
        env = dict(os.environ, POD_NAME="ddp3d-operator-e2e", POD_NAMESPACE=OPERATOR_NS)
        env.pop("KUBECONFIG", None)
        cls.operator_log_path = os.path.join(cls.tmp, "operator.log")
        log = open(cls.operator_log_path, "wb")
        cls.operator = subprocess.Popen([OPERATOR_BIN, *args], env=env, stdout=log,
                                        stderr=subprocess.STDOUT, start_new_session=True,
                                        preexec_fn=die_with_parent)
        log.close()
        cls.addClassCleanup(cls._stop_operator)

        def ready():
            if cls.operator.poll() is not None:
                raise AssertionError(f"ddp3d-operator exited ({cls.operator.returncode}):\n"
                                     + cls.operator_log())
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{cls.health_port}/readyz", timeout=2) as r:
                    return r.status == 200
            except OSError:
                return False
        wait_until(ready, 60, "ddp3d-operator /readyz")

    @classmethod
    def _stop_operator(cls):
        if cls.operator.poll() is None:
            cls.operator.send_signal(signal.SIGTERM)
            try:
                cls.operator.wait(timeout=20)
            except subprocess.TimeoutExpired:
                cls.operator.kill()
                cls.operator.wait()

    @classmethod
    def operator_log(cls):
        with open(cls.operator_log_path, errors="replace") as f:
            return f.read()

    # -- helpers -----------------------------------------------------------------------
    def setUp(self):
        self.assertEqual(self.kubelet.errors, [], "the e2e kubelet reported errors")

    def tearDown(self):
        self.assertEqual(self.kubelet.errors, [], "the e2e kubelet reported errors")
        self.assertIsNone(self.operator.poll(), "ddp3d-operator died:\n" + self.operator_log())

    def apply_job(self, name, max_epochs, backoff_limit=0):
        # Pods share this machine's filesystem, so the work dir (a volume on a cluster) is
        # simply a local folder; --resume auto makes a restarted group continue from it.
        self.work_dir = os.path.join(self.tmp, "work", name)
        job = {
            "apiVersion": "ddp3d.io/v1alpha1", "kind": "TrainingJob",
            "metadata": {"name": name, "namespace": JOBS_NS},
            "spec": {
                "nnodes": 2, "gpusPerNode": 0, "port": free_port(), "config": TOY_CONFIG,
                "args": ["--work-dir", self.work_dir, "--resume", "auto",
                         "--cfg-options", f"train_cfg.max_epochs={max_epochs}"],
                "image": "ddp3d-worker:e2e",
                "runPolicy": {"restartPolicy": "OnFailure", "backoffLimit": backoff_limit,
                              "cleanPodPolicy": "None"},
            }}
        self.cp.kubectl("apply", "-f", "-", stdin=json.dumps(job), check=True)

    def assert_trained(self, log, max_epochs, loss_must_halve=True):
        """Rank 0's log: world size 2, trained up to max_epochs, the loss fell."""
        self.assertIn("ddp3d train: world size 2", log)
        self.assertIn("training finished", log)
        losses = [(int(e), float(v)) for e, _, v in LOSS.findall(log)]
        self.assertTrue(losses, log[-2000:])
        self.assertEqual(losses[-1][0], max_epochs)
        if loss_must_halve:
            self.assertLess(losses[-1][1], losses[0][1] / 2, f"loss fell: {losses[0]} -> {losses[-1]}")
        return losses

    def job_status(self, name):
        return self.api.training_job(JOBS_NS, name).get("status") or {}

    def wait_phase(self, name, phase, timeout_s=SCENARIO_TIMEOUT_S):
        def reached():
            status = self.job_status(name)
            if status.get("phase") == "Failed" and phase != "Failed":
                raise AssertionError(f"job {name} Failed: {json.dumps(status, indent=1)}\n"
                                     + self.describe_runs(name))
            return status if status.get("phase") == phase else None
        try:
            return wait_until(reached, timeout_s, f"job {name} to reach {phase}")
        except AssertionError as e:
            raise AssertionError(f"{e}\nstatus: {json.dumps(self.job_status(name), indent=1)}\n"
                                 + self.describe_runs(name)) from None

    def describe_runs(self, job):
        out = []
        for run in self.kubelet.runs.values():
            if run.name.startswith(job + "-"):
                out.append(f"--- {run.name} attempt {run.labels.get('ddp3d.io/attempt')} ip {run.ip} "
                           f"exit {run.exit_code}\n{run.log()[-3000:]}")
        return "\n".join(out) + "\n--- operator log (tail)\n" + self.operator_log()[-3000:]

    def pod(self, name):
        return self.api.get(f"/api/v1/namespaces/{JOBS_NS}/pods/{name}")

    # -- scenarios ---------------------------------------------------------------------
    def test_1_two_node_job_rendezvous_over_pod_network_and_succeeds(self):
        name = "toy"
        self.apply_job(name, max_epochs=6)
        status = self.wait_phase(name, "Succeeded")
        phases = self.recorder.phases(name)
        self.assertIn("Running", phases, f"phases seen: {phases}")
        self.assertLess(phases.index("Running"), phases.index("Succeeded"), phases)
        self.assertEqual(status.get("restarts", 0), 0)

        runs = {r.name: r for r in self.kubelet.runs.values() if r.name.startswith(name + "-")}
        self.assertEqual(sorted(runs), [f"{name}-node-0", f"{name}-node-1"])
        ips = {r.ip for r in runs.values()}
        self.assertEqual(len(ips), 2, "each pod has its own IP")
        master = f"{name}-node-0.{name}.{JOBS_NS}.svc"
        for rank, pod_name in enumerate(sorted(runs)):
            run_ = runs[pod_name]
            self.assertEqual(run_.exit_code, 0, run_.log())
            log = run_.log()
            self.assertIn(f"node {rank}/2: world size 2", log)
            self.assertIn(f"rendezvous at {master}:{env_port(self.pod(pod_name))} as rank {rank}/2", log,
                          "each rank joined at rank 0's DNS name")
            # The operator's DDP3D_METRICS_PORT/DDP3D_JOB reach the worker: it serves /metrics.
            self.assertIn(f"metrics: serving http://0.0.0.0:9400/metrics (DDP3D_METRICS_PORT=9400, "
                          f"rank {rank}, job_name {name})", log)
            if rank == 0:
                losses = self.assert_trained(log, 6)
                # The attempt's Secret reached both ranks: they proved the same token.
                self.assertIn("rendezvous authenticated: every rank holds the job's token", log)
            pod = self.pod(pod_name)
            env = {e["name"]: e.get("value") for e in pod["spec"]["containers"][0]["env"]}
            self.assertEqual((env["NNODES"], env["NODE_RANK"], env["WORLD_SIZE"], env["MASTER_ADDR"]),
                             ("2", str(rank), "2", master))
            self.assertEqual(pod["status"]["phase"], "Succeeded")
            self.assertEqual(pod["status"]["podIP"], run_.ip)
            term = pod["status"]["containerStatuses"][0]["state"]["terminated"]
            self.assertEqual(term["exitCode"], 0)
        nodes = {n.get("pod"): n for n in status.get("nodes", [])}
        self.assertEqual(sorted(nodes), sorted(runs), status)
        print(f"[e2e] {name}: phases {phases}; pod IPs {sorted(ips)}; MASTER_ADDR {master}; "
              f"loss {losses[0][1]} -> {losses[-1][1]} over {losses[-1][0]} epochs")

    def test_2_killed_rank_restarts_the_whole_group(self):
        name, epochs = "crash", 30
        self.apply_job(name, max_epochs=epochs, backoff_limit=2)
        victim_pod = f"{name}-node-1"

        # Mid-training: once rank 0 has saved its second checkpoint, SIGKILL rank 1's
        # training process (as the OOM killer would), not its launcher.
        def checkpoint_saved():
            return any("epoch_2.pth" in r.log() for r in self.kubelet.runs_of(f"{name}-node-0"))
        wait_until(checkpoint_saved, 90, "rank 0's second checkpoint", interval_s=0.02)

        def rank_process():
            for run_ in self.kubelet.runs_of(victim_pod):
                for pid, argv in self.kubelet.processes(run_):
                    if len(argv) > 1 and argv[0].endswith("ddp3d") and argv[1] == RANK_SUBCOMMAND:
                        return run_, pid
            return None
        first_run, pid = wait_until(rank_process, 10, f"the rank process of {victim_pod}")
        os.kill(pid, signal.SIGKILL)

        # The pod as the API server stored it when the kubelet reported the end.
        stored = wait_until(lambda: first_run.terminal_status, 30, f"{victim_pod} reported ended")
        self.assertEqual(stored["phase"], "Failed")
        self.assertEqual(stored["containerStatuses"][0]["state"]["terminated"]["exitCode"], 137)
        self.assertEqual(first_run.exit_code, 137, first_run.log())
        self.assertIn("killed by signal 9", first_run.log(), "the launcher names how the rank died")

        status = self.wait_phase(name, "Succeeded")
        self.assertEqual(status.get("restarts"), 1, status)
        phases = self.recorder.phases(name)
        self.assertIn("Restarting", phases, phases)
        # The operator's status named a failed exit code: 137 of the victim, or that of its
        # peer, which fails too once its all-reduce partner is gone (whichever it saw first).
        failed_codes = {(n.get("pod"), n.get("exitCode")) for job, st in self.recorder.statuses
                        if job == name for n in st.get("nodes", []) if n.get("exitCode")}
        self.assertTrue(failed_codes, "no failed node in any status")
        self.assertTrue(all(code == 137 for pod, code in failed_codes if pod == victim_pod), failed_codes)
        for rank in (0, 1):
            runs = self.kubelet.runs_of(f"{name}-node-{rank}")
            self.assertEqual([r.labels.get("ddp3d.io/attempt") for r in runs], ["0", "1"])
            self.assertEqual(runs[-1].exit_code, 0, runs[-1].log())
            self.assertIn(f"node {rank}/2: world size 2", runs[-1].log())
            env = {e["name"]: e.get("value") for e in self.pod(f"{name}-node-{rank}")["spec"]["containers"][0]["env"]}
            self.assertEqual(env["DDP3D_ATTEMPT"], "1")
        # Attempt 1 resumed from attempt 0's newest checkpoint and finished the schedule.
        log = self.kubelet.runs_of(f"{name}-node-0")[-1].log()
        resumed = re.search(r"resumed from (\S+epoch_(\d+)\.pth) at epoch (\d+)", log)
        self.assertIsNotNone(resumed, log[-3000:])
        self.assertGreaterEqual(int(resumed.group(2)), 2)
        self.assertTrue(resumed.group(1).startswith(self.work_dir))
        losses = self.assert_trained(log, epochs, loss_must_halve=False)
        self.assertGreater(losses[0][0], 1, "attempt 1 did not start again from epoch 1")
        print(f"[e2e] {name}: phases {phases}; attempt 0 exit {first_run.exit_code}; failed nodes in "
              f"the job status {sorted(failed_codes)}; restarts "
              f"{status.get('restarts')}; attempt 1 resumed at epoch {resumed.group(3)}")

    def test_3_operator_runs_as_the_charts_service_account(self):
        kubeconfig = self.operator_kubeconfig
        who = self.cp.kubectl("auth", "whoami", "-o", "jsonpath={.status.userInfo.username}",
                              kubeconfig=kubeconfig, check=True).stdout
        self.assertEqual(who, f"system:serviceaccount:{OPERATOR_NS}:{OPERATOR_SA}")
        self.assertEqual(self.assert_kinds, ["ClusterRole", "ClusterRoleBinding", "Role",
                                             "RoleBinding", "ServiceAccount"])
        # It is not an administrator: the role grants nothing beyond the operator's needs.
        for verb, resource in (("list", "secrets"), ("create", "deployments"), ("update", "pods")):
            res = self.cp.kubectl("auth", "can-i", verb, resource, "-n", JOBS_NS, kubeconfig=kubeconfig)
            self.assertEqual(res.stdout.strip(), "no", f"can-i {verb} {resource}")
        # The chart's flags reached the binary (leader election on, watching the namespace).
        self.assertIn("--leader-elect", self.operator_args)
        self.assertIn(f"--namespace={JOBS_NS}", self.operator_args)
        lease = self.cp.kubectl("-n", OPERATOR_NS, "get", "lease", "ddp3d-operator", "-o",
                                "jsonpath={.spec.holderIdentity}").stdout
        self.assertIn("ddp3d-operator-e2e", lease)
        self.assertNotIn("forbidden", self.operator_log().lower())


if __name__ == "__main__":
    unittest.main(verbosity=2)
