"""Clusters with several nodes that compete and fail, on the real test cluster
(tests/cluster/up.sh --nodes 3): three kubelets, each with its own containerd and pod subnet,
the PodGroup API and the scheduler's gang scheduling switched on (Kubernetes 1.36 alpha), and
one accelerator per node advertised as the extended resource example.com/gpu, so that a pod
of every job needs a node of its own.

a. `helm install` with the operator pinned to node 0 (the control-plane node, never powered
   off).
b. Gang placement: three 2-node jobs submitted at once on three accelerators. One pod at a
   time, each job could take one accelerator and all three would wait for ever; with a
   PodGroup per attempt every job completes, and a watch on the pods shows that no job ever
   had a pod bound to a node while another of its pods was refused for room.
c. `kubectl drain` of a node running a rank: the ranks checkpoint at the iteration on SIGTERM,
   the gang restarts on the other nodes as a disruption (restarts stay 0) and resumes from that
   very iteration: no step is lost.
d. Power loss of a node running a rank (node.sh poweroff: its kubelet, runtime and containers
   gone at once, its pods' addresses unreachable): the operator calls the node lost after
   runPolicy.nodeLossTimeoutSeconds, force-deletes the pod left there, and the gang continues
   on the two live nodes from its newest checkpoint and Succeeds. The node powered on again
   rejoins Ready and runs nothing of the job. Time from power-off to the first new training
   step and the steps lost are measured (docs/e2e.md).
e. Odd input: a job whose gang can never fit waits, says why, and does not spin; a node whose
   kubelet is frozen for longer than the node-monitor grace period but less than
   nodeLossTimeoutSeconds (a flap) restarts nothing.
f. Elastic size: a 3-node job with elastic.minNodes 2 while only 2 nodes have an accelerator
   runs on 2 (its gang of 3 is not placed within placementTimeoutSeconds) with the global batch
   of 3 and Succeeds; when the third node gets its accelerator back, a probe pod finds the room
   and the job grows back to 3 at a SIGTERM checkpoint, resuming at the iteration it stopped.
g-k. Kueue (tests/cluster/kueue.sh) on the same cluster: quota between two teams, preemption
   without a lost step, partial admission of an elastic job, the operator restarted while jobs
   are queued and admitted, a missing LocalQueue, a Workload deleted by hand and
   waitForPodsReady's eviction (kueue_scenarios.py).
"""

import json
import os
import signal
import ssl
import sys
import threading
import time
import unittest
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cluster_scenario import (WORKER_IMAGE, WORKER_UID, ClusterScenario, log,  # noqa: E402
                              read_env, run)
from kueue_scenarios import KueueScenarios  # noqa: E402

NS = "train"
GPU = "example.com/gpu"
DEMO_CONFIG = "configs/pointpillars/pointpillars_demo_synthetic_car.yaml"
TOY_CONFIG = "configs/toy/toy_regression_2proc.yaml"
DATA = "/workspace/ddp3d/data"  # the volume: data/ of the worker image's WORKDIR
CLAIM = "shared-data"
METRICS_PORT = 9400
# Checkpoints every 10 iterations, a log line every 5.
ITER_CHECKPOINTS = ["--cfg-options", "default_hooks.checkpoint.by_epoch=false",
                    "default_hooks.checkpoint.interval=10", "default_hooks.logger.interval=5"]


def metric(ip, name):
    """One sample of a rank's /metrics, None when it does not answer."""
    try:
        with urllib.request.urlopen(f"http://{ip}:{METRICS_PORT}/metrics", timeout=2) as r:
            for line in r.read().decode().splitlines():
                if line.startswith(name + " ") or line.startswith(name + "{"):
                    return float(line.split()[-1])
    except OSError:
        return None
    return None


# A gang's pods are bound one API call after another: a job attempt may show some pods bound
# and others not for this long while the scheduler binds it whole.
BINDING_WINDOW_S = 10.0


class PodWatch(threading.Thread):
    """A watch on the jobs' pods through the API server (not a poll): keeps each pod's latest
    node and scheduling state, and checks on every event that no job attempt holds some of its
    pods on nodes while another of its pods waits (unbound past the binding window)."""

    def __init__(self, cp_env):
        super().__init__(daemon=True)
        self.ctx = ssl.create_default_context(cafile=cp_env["CA_CERT"])
        self.ctx.load_cert_chain(cp_env["ADMIN_CERT"], cp_env["ADMIN_KEY"])
        self.url = cp_env["APISERVER_URL"] + f"/api/v1/namespaces/{NS}/pods?watch=1"
        self.pods = {}         # name -> (job, attempt, node)
        self.first_bound = {}  # (job, attempt) -> when its first pod was seen bound
        self.partial_s = 0.0   # longest time an attempt was seen partly bound
        self.violations = []   # what broke the rule, with the pods' states then
        self.overlaps = 0      # events at which one job waited while another held nodes
        self.refusals = set()  # the scheduler's messages to refused pods
        self.stop_flag = threading.Event()
        self.lock = threading.Lock()

    def run(self):
        while not self.stop_flag.is_set():
            try:
                req = urllib.request.Request(self.url)
                with urllib.request.urlopen(req, context=self.ctx, timeout=30) as stream:
                    for line in stream:
                        if self.stop_flag.is_set():
                            return
                        self.on_event(json.loads(line))
            except OSError:
                time.sleep(0.2)

    def on_event(self, event):
        pod = event.get("object", {})
        meta = pod.get("metadata", {})
        labels = meta.get("labels", {})
        if "ddp3d.io/job-name" not in labels:
            return
        name = meta["name"]
        with self.lock:
            for c in pod.get("status", {}).get("conditions", []):
                if c["type"] == "PodScheduled" and c["status"] == "False":
                    self.refusals.add(c.get("message", "") or c.get("reason", ""))
            if (event["type"] == "DELETED" or meta.get("deletionTimestamp")
                    or pod.get("status", {}).get("phase") in ("Succeeded", "Failed")):
                self.pods.pop(name, None)
            else:
                self.pods[name] = (labels["ddp3d.io/job-name"], labels.get("ddp3d.io/attempt"),
                                   pod.get("spec", {}).get("nodeName", ""))
            self.check(time.monotonic())

    def check(self, now):
        groups = {}
        for job, attempt, node in self.pods.values():
            groups.setdefault((job, attempt), []).append(node)
        waiting = holding = False
        for key, nodes in groups.items():
            bound = [n for n in nodes if n]
            if bound and key not in self.first_bound:
                self.first_bound[key] = now
            if bound and len(bound) < len(nodes):
                partial = now - self.first_bound[key]
                self.partial_s = max(self.partial_s, partial)
                if partial > BINDING_WINDOW_S:
                    self.violations.append(f"{key}: on {bound} while {len(nodes) - len(bound)} "
                                           f"pod(s) waited {partial:.1f}s")
            holding = holding or bool(bound)
            waiting = waiting or not bound
        if holding and waiting:
            self.overlaps += 1

    def stop(self):
        self.stop_flag.set()


class MultiNodeScenarios(KueueScenarios, ClusterScenario):
    up_args = ("--nodes", "3", "--capacity", f"{GPU}=1")
    up_env = {"CLUSTER_FEATURE_GATES": "GenericWorkload=true,GangScheduling=true",
              "CLUSTER_RUNTIME_CONFIG": "scheduling.k8s.io/v1alpha2=true"}
    jobs_ns = NS

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.nodes = cls.env["NODES"].split(",")
        cls.control_node = cls.nodes[0]

    # -- set-up ----------------------------------------------------------------------------
    def require_operator(self):
        if not getattr(type(self), "installed", False):
            self.fail("scenario a did not install the operator")

    @classmethod
    def shared_volume(cls):
        """The jobs' namespace (Pod Security restricted) and one volume every node mounts:
        a host folder, which all nodes of this one-machine cluster see (on a real cluster, a
        ReadWriteMany volume such as NFS)."""
        if getattr(cls, "volume", None):
            return cls.volume
        cls.volume = os.path.join(cls.dir, "volumes", "shared")
        os.makedirs(cls.volume)
        os.chown(cls.volume, WORKER_UID, WORKER_UID)
        items = [
            {"apiVersion": "v1", "kind": "Namespace",
             "metadata": {"name": NS, "labels": {
                 "pod-security.kubernetes.io/enforce": "restricted",
                 "pod-security.kubernetes.io/enforce-version": "latest"}}},
            {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "shared-data"},
             "spec": {"capacity": {"storage": "2Gi"}, "accessModes": ["ReadWriteMany"],
                      "persistentVolumeReclaimPolicy": "Retain", "storageClassName": "",
                      "claimRef": {"namespace": NS, "name": CLAIM},
                      "hostPath": {"path": cls.volume, "type": "Directory"}}},
            {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
             "metadata": {"name": CLAIM, "namespace": NS},
             "spec": {"accessModes": ["ReadWriteMany"], "storageClassName": "",
                      "volumeName": "shared-data", "resources": {"requests": {"storage": "2Gi"}}}},
        ]
        cls.kubectl("apply", "-f", "-", stdin=json.dumps({"apiVersion": "v1", "kind": "List",
                                                           "items": items}))
        return cls.volume

    def submit(self, name, nnodes, config, args=(), elastic=None, **run_policy):
        """A CPU TrainingJob whose every pod needs one example.com/gpu."""
        self.shared_volume()
        policy = {"backoffLimit": 0, "nodeLossTimeoutSeconds": 5, **run_policy}
        job = {
            "apiVersion": "ddp3d.io/v1alpha1", "kind": "TrainingJob",
            "metadata": {"name": name, "namespace": NS},
            "spec": {
                "nnodes": nnodes, "gpusPerNode": 0, "port": 29500, "config": config,
                "args": ["--work-dir", f"data/work_dirs/{name}", *args], "image": WORKER_IMAGE,
                "template": {"spec": {
                    "containers": [{
                        "name": "worker",
                        "resources": {"requests": {"cpu": "100m", "memory": "256Mi", GPU: "1"},
                                      "limits": {"memory": "4Gi", GPU: "1"}},
                        "volumeMounts": [{"name": "data", "mountPath": DATA}]}],
                    "volumes": [{"name": "data",
                                 "persistentVolumeClaim": {"claimName": CLAIM}}]}},
                "runPolicy": policy}}
        if elastic:
            job["spec"]["elastic"] = elastic
        self.kubectl("apply", "-f", "-", stdin=json.dumps(job))

    def pods_of(self, name, attempt=None):
        pods = self.get("-n", NS, "pods", "-l", f"ddp3d.io/job-name={name},ddp3d.io/node-rank")["items"]
        return sorted((p for p in pods
                       if attempt is None or p["metadata"]["labels"]["ddp3d.io/attempt"] == str(attempt)),
                      key=lambda p: int(p["metadata"]["labels"]["ddp3d.io/node-rank"]))

    def running_pods(self, name, attempt, n):
        def ready():
            pods = [p for p in self.pods_of(name, attempt)
                    if p["status"].get("phase") == "Running" and p["status"].get("podIP")
                    and not p["metadata"].get("deletionTimestamp")]
            return len(pods) == n, pods
        return self.wait(f"{n} pods of {name} attempt {attempt} Running", 300, ready)

    def steps(self, pods):
        """Training steps each rank reports on its /metrics (None: no answer)."""
        return [metric(p["status"]["podIP"], "ddp3d_train_steps_total") for p in pods]

    def wait_steps(self, name, attempt, n, at_least):
        def trained():
            pods = self.running_pods(name, attempt, n)
            got = self.steps(pods)
            return all(s is not None and s >= at_least for s in got), (pods, got)
        return self.wait(f"{name} past {at_least} steps", 420, trained, interval=1)

    # -- scenarios -------------------------------------------------------------------------
    def test_a_three_nodes_and_the_operator_on_the_control_node(self):
        nodes = self.get("nodes")["items"]
        self.assertEqual(sorted(n["metadata"]["name"] for n in nodes), sorted(self.nodes))
        for n in nodes:
            self.assertEqual(n["status"]["allocatable"].get(GPU), "1", n["metadata"]["name"])
        pod = self.install_operator(
            "nodeSelector.kubernetes\\.io/hostname=" + self.control_node)
        self.assertEqual(pod["spec"]["nodeName"], self.control_node)
        type(self).installed = True

    def test_b_more_gangs_than_fit_all_complete_without_holding_part_of_a_gang(self):
        self.require_operator()
        watch = PodWatch(self.cp_env)
        watch.start()
        try:
            names = ["gang-a", "gang-b", "gang-c"]
            t0 = time.monotonic()
            for name in names:  # at once: 6 pods for 3 accelerators
                self.submit(name, 2, TOY_CONFIG, ["--cfg-options", "train_cfg.max_epochs=12"])
            for name in names:
                self.wait_phase(name, "Succeeded", 600)
            log(f"3 gangs of 2 on 3 accelerators: all Succeeded in {time.monotonic() - t0:.1f}s; "
                f"{watch.overlaps} watch events with one job waiting while another held nodes; "
                f"an attempt was partly bound for at most {watch.partial_s:.2f}s")
        finally:
            watch.stop()
        self.assertEqual(watch.violations, [], "a gang was placed in part")
        self.assertGreater(watch.overlaps, 0, "the jobs never competed: the scenario proves nothing")
        for name in names:
            status = self.job_status(name)
            gang = next(c for c in status["conditions"] if c["type"] == "GangScheduling")
            self.assertEqual((gang["status"], gang["reason"]), ("True", "PodGroup"), name)
            self.assertEqual(status["restarts"], 0, name)
        self.assertTrue(any("gang" in m or GPU in m for m in watch.refusals),
                        f"the scheduler said why jobs waited: {watch.refusals}")

    def test_c_a_drained_node_loses_no_step(self):
        self.require_operator()
        name = "pp-drain"
        self.submit(name, 2, DEMO_CONFIG, ITER_CHECKPOINTS + ["train_cfg.max_epochs=4"])
        pods, before = self.wait_steps(name, 0, 2, 12)
        victim = next(p["spec"]["nodeName"] for p in pods if p["spec"]["nodeName"] != self.control_node)
        t0 = time.monotonic()
        self.node_sh("drain", victim)
        log(f"drain {victim} (steps {before}): {time.monotonic() - t0:.1f}s")
        try:
            new = self.running_pods(name, 1, 2)
            self.assertNotIn(victim, [p["spec"]["nodeName"] for p in new], "a cordoned node")
            rank0 = new[0]["metadata"]["name"]
            self.wait_log(rank0, "resumed from", "the new attempt's resume", 300, 1)
            resumed = [line for line in self.pod_logs(rank0).splitlines() if "resumed from" in line][0]
            iteration = int(resumed.split("iteration ")[1].split(" ")[0].rstrip(";"))
            self.assertIn(f"iter_{iteration}.pth", resumed)
            self.assertGreaterEqual(iteration, max(before), "steps done before the drain were lost")
            self.wait_phase(name, "Succeeded", 600)
        finally:
            self.node_sh("uncordon", victim)
        status = self.job_status(name)
        self.assertEqual((status["restarts"], status["disruptions"]), (0, 1), status)
        log(f"drain: resumed at iteration {iteration} (steps before the drain: {before}); 0 steps lost")

    def test_d_a_powered_off_node_is_left_behind_and_rejoins_clean(self):
        self.require_operator()
        name = "pp-power"
        self.submit(name, 2, DEMO_CONFIG, ITER_CHECKPOINTS + ["train_cfg.max_epochs=4"])
        pods, _ = self.wait_steps(name, 0, 2, 15)
        victim = next(p["spec"]["nodeName"] for p in pods if p["spec"]["nodeName"] != self.control_node)
        at_poweroff = max(s for s in self.steps(pods) if s is not None)
        t0 = time.monotonic()
        self.node_sh("poweroff", victim)
        log(f"poweroff {victim} at step {at_poweroff:.0f}")

        new = self.running_pods(name, 1, 2)
        self.assertNotIn(victim, [p["spec"]["nodeName"] for p in new])

        def first_step():
            got = self.steps(new)
            return all(s is not None and s >= 1 for s in got), got
        self.wait("the first training step of attempt 1", 300, first_step, interval=0.25)
        recovery = time.monotonic() - t0
        rank0 = new[0]["metadata"]["name"]
        resumed = [line for line in self.pod_logs(rank0).splitlines() if "resumed from" in line][0]
        iteration = int(resumed.split("iteration ")[1].split(" ")[0].rstrip(";"))
        lost = at_poweroff - iteration
        warnings = self.get("-n", NS, "events", "--field-selector",
                            f"involvedObject.name={name},type=Warning")["items"]
        log(f"power-off -> first new training step: {recovery:.1f}s; steps lost: {lost:.0f} "
            f"(at power-off {at_poweroff:.0f}, resumed at {iteration}); the job's warnings: "
            f"{sorted({e['reason'] for e in warnings})}")
        self.assertGreaterEqual(lost, 0)
        self.assertLessEqual(lost, 10 + 10, "more lost than the checkpoint interval allows")
        self.wait_phase(name, "Succeeded", 600)
        status = self.job_status(name)
        self.assertEqual(status["restarts"], 0, status)
        self.assertGreaterEqual(status["disruptions"], 1, status)

        t1 = time.monotonic()
        self.node_sh("poweron", victim)
        log(f"poweron {victim} -> Ready: {time.monotonic() - t1:.1f}s")
        index = self.nodes.index(victim)
        sock = self.env.get(f"NODE_{index}_CONTAINERD_SOCK")
        ctr = os.path.join(self.env["CACHE"], "bin", "ctr")

        def job_containers():
            """The node's containers (and sandboxes) of this job's pods, every attempt's."""
            res = run([ctr, "--address", sock, "-n", "k8s.io", "containers", "ls", "-q",
                       f"labels.\"io.kubernetes.pod.namespace\"=={NS}"])
            if res.returncode != 0:
                return None
            ids = res.stdout.split()
            return [i for i, pod in zip(ids, self.pod_names_of_containers(ctr, sock, ids))
                    if pod and pod.startswith(name + "-")]

        def clean():
            on_node = [p["metadata"]["name"] for p in self.pods_of(name)
                       if p["spec"].get("nodeName") == victim]
            left = job_containers()
            return not on_node and left == [], (on_node, left)
        # The kubelet removes what belonged to deleted pods in its garbage collection, once a
        # minute (ContainerGCPeriod): three periods leave room for a loaded machine.
        t2 = time.monotonic()
        deadline = t2 + 200
        ok, last = clean()
        while not ok and time.monotonic() < deadline:
            time.sleep(1)
            ok, last = clean()
        if not ok:
            self.fail(f"{victim} still holds {last} of the job 200 s after poweron:\n"
                      + self.containers_described(ctr, sock, last[1] or [])
                      + self.kubelet_log_tail(index, ("garbage", "GarbageCollect", "Remove",
                                                      "orphan", "Failed", "error")))
        log(f"{victim} holds nothing of the job {time.monotonic() - t2:.1f}s after Ready")

    def pod_names_of_containers(self, ctr, sock, ids):
        names = []
        for cid in ids:
            info = run([ctr, "--address", sock, "-n", "k8s.io", "containers", "info", cid])
            try:
                names.append(json.loads(info.stdout).get("Labels", {}).get("io.kubernetes.pod.name"))
            except json.JSONDecodeError:
                names.append(None)  # removed meanwhile
        return names

    def containers_described(self, ctr, sock, ids):
        """Pod, container name and task state of each leftover container on a node."""
        lines = []
        for cid in ids:
            info = run([ctr, "--address", sock, "-n", "k8s.io", "containers", "info", cid])
            try:
                labels = json.loads(info.stdout).get("Labels", {})
            except json.JSONDecodeError:
                labels = {}
            task = run([ctr, "--address", sock, "-n", "k8s.io", "tasks", "ps", cid])
            lines.append(f"  {cid[:12]} pod={labels.get('io.kubernetes.pod.name')} "
                         f"container={labels.get('io.kubernetes.container.name') or labels.get('io.cri-containerd.kind')} "
                         f"task={'running' if task.returncode == 0 else 'none'}")
        return "\n".join(lines) + "\n"

    def kubelet_log_tail(self, index, words, n=40):
        path = os.path.join(self.env[f"NODE_{index}_LOGS"], "kubelet.log")
        try:
            with open(path, errors="replace") as f:
                hits = [line for line in f if any(w in line for w in words)]
        except OSError as e:
            return f"(no kubelet log: {e})"
        return f"{path}, last lines naming {words}:\n" + "".join(hits[-n:])

    def test_e_a_gang_that_never_fits_waits_and_a_flapping_node_restarts_nothing(self):
        self.require_operator()
        # Four pods, three accelerators: it waits, says why, and the operator does not spin.
        self.submit("too-big", 4, TOY_CONFIG)

        def stuck():
            st = self.job_status("too-big")
            c = next((c for c in st.get("conditions", []) if c["type"] == "Stuck"), None)
            return bool(c and c["status"] == "True"), st
        status = self.wait("too-big's Stuck condition", 120, stuck)
        self.assertIn("Unschedulable", json.dumps(status["conditions"]))
        uids = sorted(p["metadata"]["uid"] for p in self.pods_of("too-big"))
        version = self.get("-n", NS, "trainingjob", "too-big")["metadata"]["resourceVersion"]
        time.sleep(20)
        self.assertEqual(sorted(p["metadata"]["uid"] for p in self.pods_of("too-big")), uids,
                         "pods recreated while waiting")
        self.assertFalse(any(p["spec"].get("nodeName") for p in self.pods_of("too-big")),
                         "part of a gang that cannot fit was placed")
        job = self.get("-n", NS, "trainingjob", "too-big")
        self.assertEqual(job["status"]["attempt"], 0)
        writes = int(job["metadata"]["resourceVersion"]) - int(version)
        log(f"too-big: waiting, {len(uids)} pods unchanged, {writes} writes to the job in 20 s "
            "(resourceVersion)")
        self.kubectl("-n", NS, "delete", "trainingjob", "too-big", "--wait=true")

        # A flap: the kubelet of a node running a rank freezes past the grace period (the node
        # turns Unknown) and comes back before nodeLossTimeoutSeconds: nothing restarts.
        grace = float(self.env.get("NODE_MONITOR_GRACE_PERIOD", "20s").rstrip("s") or 20)
        self.submit("flap", 2, TOY_CONFIG, ["--cfg-options", "train_cfg.max_epochs=400"],
                    nodeLossTimeoutSeconds=int(grace) + 60)
        pods = self.running_pods("flap", 0, 2)
        victim = next(p["spec"]["nodeName"] for p in pods if p["spec"]["nodeName"] != self.control_node)
        # cluster.env as it is now: a node powered on again has a new kubelet.
        env = read_env(os.path.join(self.dir, "cluster.env"))
        pid = int(env[f"NODE_{self.nodes.index(victim)}_KUBELET_PID"])
        os.kill(pid, signal.SIGSTOP)
        try:
            def unknown():
                node = self.get("node", victim)
                ready = next(c for c in node["status"]["conditions"] if c["type"] == "Ready")
                return ready["status"] == "Unknown", ready["status"]
            self.wait(f"{victim} Ready=Unknown", grace + 60, unknown)
            time.sleep(5)
        finally:
            os.kill(pid, signal.SIGCONT)

        def ready_again():
            node = self.get("node", victim)
            ready = next(c for c in node["status"]["conditions"] if c["type"] == "Ready")
            return ready["status"] == "True", ready["status"]
        self.wait(f"{victim} Ready again", 120, ready_again)
        status = self.job_status("flap")
        self.assertEqual((status["attempt"], status["restarts"], status["disruptions"]), (0, 0, 0),
                         status)
        self.assertEqual(status["phase"], "Running")
        self.kubectl("-n", NS, "delete", "trainingjob", "flap", "--wait=true")

    def test_f_an_elastic_job_runs_smaller_and_grows_back_at_a_checkpoint(self):
        self.require_operator()
        name = "pp-elastic"
        spare = self.nodes[2]
        self.node_sh("capacity", spare, f"{GPU}=0")
        t0 = time.monotonic()
        self.submit(name, 3, DEMO_CONFIG, ITER_CHECKPOINTS + ["train_cfg.max_epochs=6"],
                    elastic={"minNodes": 2, "placementTimeoutSeconds": 15,
                             "growIntervalSeconds": 20})
        try:
            pods = self.running_pods(name, 1, 2)
            shrunk = time.monotonic() - t0
            status = self.job_status(name)
            self.assertEqual(status["size"], 2, status)
            full = next(c for c in status["conditions"] if c["type"] == "FullSize")
            self.assertEqual((full["status"], full["reason"]), ("False", "PlacementTimeout"))
            self.assertIn("restarting on 2 of 3 nodes", full["message"])
            for p in pods:
                env = {e["name"]: e.get("value") for e in p["spec"]["containers"][0]["env"]}
                self.assertEqual((env["NNODES"], env["WORLD_SIZE"], env["DDP3D_BATCH_WORLD_SIZE"]),
                                 ("2", "2", "3"))
                self.assertNotEqual(p["spec"]["nodeName"], spare)
            out = self.kubectl("-n", NS, "get", "tj", name).stdout
            self.assertEqual(out.splitlines()[1].split()[2:4], ["3", "2"], out)  # NODES, SIZE
            _, before = self.wait_steps(name, 1, 2, 12)
            log(f"elastic: submitted -> running on 2 of 3 nodes in {shrunk:.1f}s; "
                f"steps {before} at size 2")
        finally:
            self.node_sh("capacity", spare, f"{GPU}=1")
        t1 = time.monotonic()
        new = self.running_pods(name, 2, 3)
        rank0 = new[0]["metadata"]["name"]
        self.wait_log(rank0, "resumed from", "the grown attempt's resume", 300, 1)

        def first_step():
            got = self.steps(new)
            return all(s is not None and s >= 1 for s in got), got
        self.wait("the first training step on 3 nodes", 300, first_step, interval=0.25)
        grown = time.monotonic() - t1
        resumed = [line for line in self.pod_logs(rank0).splitlines() if "resumed from" in line][0]
        iteration = int(resumed.split("iteration ")[1].split(" ")[0].rstrip(";"))
        self.assertGreaterEqual(iteration, max(before), "steps done at size 2 were lost")
        status = self.job_status(name)
        self.assertEqual(status["size"], 3, status)
        full = next(c for c in status["conditions"] if c["type"] == "FullSize")
        self.assertEqual((full["status"], full["reason"]), ("True", "FullSize"))
        self.wait_phase(name, "Succeeded", 600)
        status = self.job_status(name)
        self.assertEqual((status["restarts"], status["disruptions"], status["attempt"]), (0, 0, 2),
                         status)
        probes = self.get("-n", NS, "pods", "-l", "ddp3d.io/role=grow-probe")["items"]
        self.assertEqual(probes, [], "a probe pod outlived the job's growth")
        reasons = [e["reason"] for e in sorted(
            self.get("-n", NS, "events", "--field-selector", f"involvedObject.name={name}")["items"],
            key=lambda e: e.get("lastTimestamp") or e.get("eventTime") or "")]
        self.assertIn("PlacementTimeout", reasons)
        self.assertIn("GrowBack", reasons)
        log(f"elastic: accelerator back -> first step on 3 nodes {grown:.1f}s; resumed at "
            f"iteration {iteration} after {before} at size 2: 0 steps lost")


if __name__ == "__main__":
    unittest.main(verbosity=2)
