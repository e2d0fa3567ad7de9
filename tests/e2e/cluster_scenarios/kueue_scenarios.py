"""Kueue on the multi-node test cluster: TrainingJobs labelled kueue.x-k8s.io/queue-name are
admitted, held and preempted by the real Kueue v0.17 (tests/cluster/kueue.sh), with the
operator speaking Kueue's Workload protocol for them (one Workload `<job>-workload` per job,
no pod before admission, pods stopped and the quota released on eviction).

Mixed into multinode_test.MultiNodeScenarios, so these scenarios share its 3-node cluster
(one example.com/gpu per node, gang scheduling on) instead of starting another; they run after
its scenarios a-f, in name order:

g. Quota between two teams: before Kueue's API is served a labelled job waits in phase Queued
   (KueueNotServed) with no pod; `kueue.sh` installs Kueue (ResourceFlavor with nodeLabels and
   tolerations, ClusterQueues team-a with 2 accelerators and team-b with 1, a LocalQueue per
   team namespace), and that job gets its Workload without an operator restart (a queued job
   asks discovery again, docs/kueue.md), is admitted and Succeeds. Team a's second 2-node job, beyond
   its quota, waits Queued (Pending, naming its queue) with no pod over several seconds
   (checked by polling and by a watch that sees every pod created), and is admitted and
   created only after the first job's Workload is Finished.
h. Preemption without loss: a low-priority 2-node toy job logging every iteration trains; a
   high-priority 2-node job needs its quota; Kueue preempts the low one, whose ranks
   checkpoint at the iteration on SIGTERM and exit 201; the quota is released only once its
   pods are gone, the high job runs and Succeeds, the low job is re-admitted (attempt + 1) and
   resumes at that iteration. The per-iteration records (vis_data/scalars.json of each
   attempt, on the shared volume) cover every iteration exactly once.
i. Partial admission: an elastic job (nnodes 3, minNodes 2) in a queue with room for 2 is
   admitted with count 2, runs with status.size 2, never has a third pod, and Succeeds.
j. The operator's pod deleted (its Deployment makes a new one) while one job is admitted and
   one queued: one Workload per job, the admitted job's pods unchanged, none added, and it
   trains on; deleted, its Workload is let go and the queued job is admitted and Succeeds.
k. What Kueue says and does beyond quota: a queue-name label that is no label value is
   refused by the API server; a job in a LocalQueue that does not exist waits Queued with
   Kueue's own words (QuotaReserved Inadmissible, "LocalQueue ... doesn't exist") and no pod,
   and is admitted once the LocalQueue is created; a Workload deleted by hand while its job
   runs stops the job's pods (Queued, WorkloadDeleted), is let go, and a new Workload is
   admitted and runs a new attempt; with Kueue restarted with waitForPodsReady (20 s), a job
   whose pod cannot be scheduled is evicted (PodsReadyTimeout) after the timeout, its pod
   deleted and the admission released, restarts 0; Kueue is then put back as it was.
"""

import datetime
import glob
import json
import os
import ssl
import threading
import time
import urllib.parse
import urllib.request

from cluster_scenario import CLUSTER, OPERATOR_NS, WORKER_IMAGE, log, run

API = "kueue.x-k8s.io/v1beta2"
WORKLOADS = "workloads.v1beta2.kueue.x-k8s.io"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
FINALIZER = "kueue.x-k8s.io/resource-in-use"
GPU = "example.com/gpu"
TOY_CONFIG = "configs/toy/toy_regression_2proc.yaml"
DATA = "/workspace/ddp3d/data"
TEAMS = ("team-a", "team-b")
FLAVOR = "accel"
FLAVOR_LABEL = ("ddp3d.io/accelerator", "fake")
FLAVOR_TOLERATION = {"key": "ddp3d.io/kueue-flavor", "operator": "Equal", "value": FLAVOR,
                     "effect": "NoSchedule"}
TOY_ITERS_PER_EPOCH = 1024 // (16 * 2)  # toy: 1024 samples, batch 16 per rank, 2 ranks
PREEMPTED_EXIT = 201  # common/exit_codes.h kPreempted


def stamp(text):
    """An RFC 3339 timestamp of the API as seconds since the epoch."""
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def conditions(obj):
    return {c["type"]: c for c in (obj.get("status") or {}).get("conditions", [])}


class Watch(threading.Thread):
    """A watch through the API server on one collection (every event, not a poll); keeps each
    object's events with the time this process received them."""

    def __init__(self, cp_env, path):
        super().__init__(daemon=True)
        self.ctx = ssl.create_default_context(cafile=cp_env["CA_CERT"])
        self.ctx.load_cert_chain(cp_env["ADMIN_CERT"], cp_env["ADMIN_KEY"])
        self.url = cp_env["APISERVER_URL"] + path
        self.events = []  # (monotonic time, type, object)
        self.lock = threading.Lock()
        self.stop_flag = threading.Event()
        self.start()

    def run(self):
        while not self.stop_flag.is_set():
            try:
                with urllib.request.urlopen(self.url, context=self.ctx, timeout=30) as stream:
                    for line in stream:
                        if self.stop_flag.is_set():
                            return
                        event = json.loads(line)
                        with self.lock:
                            self.events.append((time.monotonic(), event["type"], event["object"]))
            except OSError:
                time.sleep(0.2)

    def stop(self):
        self.stop_flag.set()

    def of(self, predicate):
        with self.lock:
            return [e for e in self.events if predicate(e[2])]


def pod_watch(cp_env, namespace):
    selector = urllib.parse.quote("ddp3d.io/job-name")
    return Watch(cp_env, f"/api/v1/namespaces/{namespace}/pods?watch=1&labelSelector={selector}")


def job_watch(cp_env, namespace):
    return Watch(cp_env, f"/apis/ddp3d.io/v1alpha1/namespaces/{namespace}/trainingjobs?watch=1")


def job_of(obj):
    return obj["metadata"].get("labels", {}).get("ddp3d.io/job-name")


def phases(watch, name):
    """The job's phases in the order the watch saw them, repeats folded."""
    out = []
    for _, _, obj in watch.of(lambda o: o["metadata"]["name"] == name):
        st = obj.get("status") or {}
        p = st.get("phase")
        reason = (conditions(obj).get("Queued") or {}).get("reason") if p == "Queued" else None
        item = f"{p}({reason})" if reason else p
        if p and (not out or out[-1] != item):
            out.append(item)
    return out


class KueueScenarios:
    """Needs MultiNodeScenarios' cluster and helpers (kubectl, get, wait, shared_volume,
    running_pods, steps, job_status)."""

    # -- set-up ----------------------------------------------------------------------------
    def setUp(self):
        super().setUp()
        self.started = time.monotonic()

    def tearDown(self):
        if "_kueue_" in self._testMethodName:  # what these scenarios add to the suite's time
            log(f"{self._testMethodName.split('_')[1]}: {time.monotonic() - self.started:.1f}s")
        super().tearDown()

    def kueue_ready(self):
        """Kueue on the cluster (once) with the queues of these scenarios."""
        cls = type(self)
        if not getattr(cls, "installed", False):  # scenario a not run: install it here
            pod = self.install_operator("nodeSelector.kubernetes\\.io/hostname=" + self.control_node)
            self.assertEqual(pod["spec"]["nodeName"], self.control_node)
            cls.installed = True
        self.shared_volume()
        if getattr(cls, "kueue_up", False):
            return
        log(f"kueue.sh: {self.kueue_sh()[1]:.1f}s")
        self.kubectl("label", "nodes", "--all", "--overwrite", "=".join(FLAVOR_LABEL))

        def cq(name, gpus):
            return {"apiVersion": API, "kind": "ClusterQueue", "metadata": {"name": name},
                    "spec": {"namespaceSelector": {},
                             "preemption": {"withinClusterQueue": "LowerPriority"},
                             "resourceGroups": [{
                                 "coveredResources": ["cpu", "memory", GPU],
                                 "flavors": [{"name": FLAVOR, "resources": [
                                     {"name": "cpu", "nominalQuota": "8"},
                                     {"name": "memory", "nominalQuota": "32Gi"},
                                     {"name": GPU, "nominalQuota": gpus}]}]}]}}

        def lq(namespace, cluster_queue):
            return {"apiVersion": API, "kind": "LocalQueue",
                    "metadata": {"name": cluster_queue, "namespace": namespace},
                    "spec": {"clusterQueue": cluster_queue}}

        def priority(name, value):
            return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                    "metadata": {"name": name}, "value": value, "preemptionPolicy": "Never",
                    "description": "ddp3d Kueue scenarios"}

        items = [
            {"apiVersion": API, "kind": "ResourceFlavor", "metadata": {"name": FLAVOR},
             "spec": {"nodeLabels": dict([FLAVOR_LABEL]), "tolerations": [FLAVOR_TOLERATION]}},
            # team-a: 2 accelerators (also the queue of the jobs in `train`), team-b: 1; three
            # in all, what the nodes have.
            cq("team-a", 2), cq("team-b", 1),
            lq("team-a", "team-a"), lq("team-b", "team-b"), lq(self.jobs_ns, "team-a"),
            priority("ddp3d-low", 100), priority("ddp3d-high", 1000),
        ]
        self.kubectl("apply", "-f", "-", stdin=json.dumps({"apiVersion": "v1", "kind": "List",
                                                           "items": items}))
        self.wait_queues_active()
        cls.kueue_up = True

    def kueue_sh(self, *args):
        """tests/cluster/kueue.sh DIR ARGS; returns its result and the seconds it took."""
        t0 = time.monotonic()
        res = run(["bash", os.path.join(CLUSTER, "kueue.sh"), self.dir, *args])
        self.assertEqual(res.returncode, 0, f"kueue.sh failed:\n{res.stderr[-4000:]}")
        return res, time.monotonic() - t0

    def wait_queues_active(self):
        for name in TEAMS:
            self.wait(f"ClusterQueue {name} Active", 60, lambda n=name: (
                conditions(self.get("clusterqueue", n)).get("Active", {}).get("status") == "True",
                self.get("clusterqueue", n).get("status")))

    def restart_operator(self):
        """Deletes the operator's pod; returns the seconds until its Deployment's new pod is
        Ready."""
        old = self.operator_pods()
        self.assertEqual(len(old), 1, [p["metadata"]["name"] for p in old])
        t0 = time.monotonic()
        self.kubectl("-n", OPERATOR_NS, "delete", "pod", old[0]["metadata"]["name"], "--wait=false")

        def replaced():
            pods = self.operator_pods()
            for p in pods:
                conds = {c["type"]: c["status"] for c in p["status"].get("conditions", [])}
                if (p["metadata"]["uid"] != old[0]["metadata"]["uid"] and conds.get("Ready") == "True"
                        and not p["metadata"].get("deletionTimestamp")):
                    return True, p["metadata"]["name"]
            return False, [(p["metadata"]["name"], p["status"].get("phase")) for p in pods]
        self.wait("a new operator pod Ready", 180, replaced)
        return time.monotonic() - t0

    def team_namespaces(self):
        items = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": t}} for t in TEAMS]
        self.kubectl("apply", "-f", "-", stdin=json.dumps({"apiVersion": "v1", "kind": "List",
                                                           "items": items}))

    def kueue_job(self, name, namespace, nnodes, epochs, queue="team-a", priority=None,
                  elastic=None, cfg=(), node_selector=None, cpu_limit=None, check=True):
        """A toy TrainingJob in `queue` (None: no label) whose every pod needs one
        example.com/gpu. In the jobs' namespace its work dir is on the shared volume,
        elsewhere on an emptyDir. `cpu_limit` caps each pod's CPU (the kubelet's CFS quota),
        which sets a floor on how long the job runs however idle the machine is. Returns
        kubectl apply's result (check=False: not checked)."""
        if namespace == self.jobs_ns:
            volume = {"name": "data", "persistentVolumeClaim": {"claimName": "shared-data"}}
        else:
            volume = {"name": "data", "emptyDir": {}}
        pod = {"containers": [{
            "name": "worker",
            "resources": {"requests": {"cpu": "100m", "memory": "256Mi", GPU: "1"},
                          "limits": {"memory": "4Gi", GPU: "1"}},
            "volumeMounts": [{"name": "data", "mountPath": DATA}]}],
            "volumes": [volume]}
        if cpu_limit:
            pod["containers"][0]["resources"]["limits"]["cpu"] = cpu_limit
        if priority:
            pod["priorityClassName"] = priority
        if node_selector:
            pod["nodeSelector"] = node_selector
        job = {
            "apiVersion": "ddp3d.io/v1alpha1", "kind": "TrainingJob",
            "metadata": {"name": name, "namespace": namespace,
                         "labels": {QUEUE_LABEL: queue} if queue else {}},
            "spec": {
                "nnodes": nnodes, "gpusPerNode": 0, "port": 29500, "config": TOY_CONFIG,
                "args": ["--work-dir", f"data/work_dirs/{name}", "--cfg-options",
                         f"train_cfg.max_epochs={epochs}", *cfg],
                "image": WORKER_IMAGE, "template": {"spec": pod},
                "runPolicy": {"backoffLimit": 0, "nodeLossTimeoutSeconds": 5}}}
        if elastic:
            job["spec"]["elastic"] = elastic
        return self.kubectl("apply", "-f", "-", stdin=json.dumps(job), check=check)

    # -- reading ---------------------------------------------------------------------------
    def tj(self, namespace, name):
        return self.get("-n", namespace, "trainingjob", name)

    def job_pods(self, namespace, name):
        return self.get("-n", namespace, "pods", "-l", f"ddp3d.io/job-name={name}")["items"]

    def workloads(self, namespace, name):
        return self.get("-n", namespace, WORKLOADS, "-l", f"ddp3d.io/job-name={name}")["items"]

    def workload(self, namespace, name):
        wls = self.workloads(namespace, name)
        self.assertEqual(len(wls), 1, f"Workloads of {name}: {[w['metadata']['name'] for w in wls]}")
        return wls[0]

    def job_events(self, namespace, name):
        items = self.get("-n", namespace, "events", "--field-selector",
                         f"involvedObject.name={name},involvedObject.kind=TrainingJob")["items"]
        return sorted(items, key=lambda e: e.get("lastTimestamp") or e.get("eventTime") or "")

    def operator_log(self):
        pods = self.operator_pods()
        if not pods:
            return "(no operator pod)"
        return self.kubectl("-n", OPERATOR_NS, "logs", pods[0]["metadata"]["name"],
                            check=False).stdout[-3000:]

    def explain(self, namespace, name):
        """What to print when a Kueue expectation fails: the job, its Workload, the operator."""
        out = [f"job: {json.dumps(self.tj(namespace, name).get('status'), indent=1)}"]
        for w in self.workloads(namespace, name):
            brief = {"metadata": w["metadata"], "status": w.get("status"),
                     "spec": {k: v for k, v in w["spec"].items() if k != "podSets"}}
            out.append(f"workload: {json.dumps(brief, indent=1)}")
        out.append("pods: " + str([(p["metadata"]["name"], p["status"].get("phase"))
                                    for p in self.job_pods(namespace, name)]))
        out.append("--- operator\n" + self.operator_log())
        out.append("--- events\n" + self.kubectl("-n", namespace, "get", "events",
                                                  "--sort-by=.lastTimestamp", check=False).stdout[-2000:])
        return "\n".join(out)

    def wait_job(self, namespace, name, what, seconds, probe, interval=0.5):
        try:
            return self.wait(f"{namespace}/{name}: {what}", seconds, probe, interval=interval)
        except AssertionError as e:
            raise AssertionError(f"{e}\n{self.explain(namespace, name)}") from None

    def wait_queued(self, namespace, name, reason, seconds=60):
        def queued():
            st = self.tj(namespace, name).get("status") or {}
            c = conditions({"status": st}).get("Queued") or {}
            return (st.get("phase") == "Queued" and c.get("status") == "True"
                    and c.get("reason") == reason), st
        return self.wait_job(namespace, name, f"phase Queued ({reason})", seconds, queued)

    def wait_job_phase(self, namespace, name, phase, seconds):
        def reached():
            st = self.tj(namespace, name).get("status") or {}
            if st.get("phase") == "Failed" and phase != "Failed":
                raise AssertionError(f"{namespace}/{name} Failed\n{self.explain(namespace, name)}")
            return st.get("phase") == phase, st.get("phase")
        return self.wait_job(namespace, name, f"phase {phase}", seconds, reached, interval=1)

    def wait_admitted(self, namespace, name, seconds=60):
        def admitted():
            wls = self.workloads(namespace, name)
            if len(wls) != 1:
                return False, len(wls)
            c = conditions(wls[0])
            ok = (c.get("Admitted", {}).get("status") == "True"
                  and (wls[0].get("status") or {}).get("admission"))
            return bool(ok), {k: (v["status"], v["reason"]) for k, v in c.items()}
        self.wait_job(namespace, name, "Workload admitted", seconds, admitted, interval=0.25)
        return self.workload(namespace, name)

    def assert_no_pods(self, namespace, name, seconds):
        """No pod of the job, read from the API every half second for `seconds`."""
        deadline = time.monotonic() + seconds
        reads = 0
        while time.monotonic() < deadline:
            pods = self.job_pods(namespace, name)
            self.assertEqual(pods, [], f"{namespace}/{name} has pods while queued")
            reads += 1
            time.sleep(0.5)
        return reads

    def wait_finished(self, namespace, name):
        """After the job ends, its Workload is Finished and Kueue's finalizer is removed."""
        def finished():
            wl = self.workload(namespace, name)
            c = conditions(wl).get("Finished") or {}
            return (c.get("status") == "True"
                    and FINALIZER not in wl["metadata"].get("finalizers", [])), wl
        return self.wait_job(namespace, name, "Workload Finished=True, finalizer removed", 60,
                             finished)

    def check_workload_shape(self, wl, namespace, name, nnodes, min_count=None):
        job = self.tj(namespace, name)
        meta = wl["metadata"]
        self.assertEqual(meta["name"], f"{name}-workload")
        self.assertEqual(meta["namespace"], namespace)
        self.assertEqual(meta["labels"].get("ddp3d.io/job-name"), name)
        owners = [(o["kind"], o["name"], o["uid"], o.get("controller")) for o in meta["ownerReferences"]]
        self.assertEqual(owners, [("TrainingJob", name, job["metadata"]["uid"], True)])
        self.assertIn(FINALIZER, meta.get("finalizers", []))
        self.assertEqual(wl["spec"]["queueName"], job["metadata"]["labels"][QUEUE_LABEL])
        sets = wl["spec"]["podSets"]
        self.assertEqual([s["name"] for s in sets], ["ranks"])
        self.assertEqual(sets[0]["count"], nnodes)
        self.assertEqual(sets[0].get("minCount"), min_count)
        requests = sets[0]["template"]["spec"]["containers"][0]["resources"]["requests"]
        self.assertEqual(requests.get(GPU), "1", requests)

    def check_flavor_applied(self, pods):
        for p in pods:
            self.assertEqual(p["spec"].get("nodeSelector", {}).get(FLAVOR_LABEL[0]), FLAVOR_LABEL[1],
                             f"{p['metadata']['name']}: the flavor's nodeLabels")
            self.assertIn(FLAVOR_TOLERATION, p["spec"].get("tolerations", []),
                          f"{p['metadata']['name']}: the flavor's toleration")

    def queue_column(self, namespace, name):
        """The QUEUE printer column of `kubectl get tj` (columns are cut at the header's
        offsets: empty cells such as EPOCH before the job trains leave no word)."""
        out = self.kubectl("-n", namespace, "get", "tj", name).stdout.splitlines()
        header = out[0]
        self.assertIn(" QUEUE ", header, header)
        start = header.index(" QUEUE ") + 1
        end = header.index(header[start:].split()[1], start)  # the next column, AGE
        return out[1][start:end].strip()

    def live_pods(self, namespace, name, n, seconds=300):
        def ready():
            pods = [p for p in self.job_pods(namespace, name)
                    if p["status"].get("phase") == "Running" and p["status"].get("podIP")
                    and not p["metadata"].get("deletionTimestamp")]
            return len(pods) == n, [(p["metadata"]["name"], p["status"].get("phase")) for p in pods]
        self.wait_job(namespace, name, f"{n} pods Running", seconds, ready)
        return [p for p in self.job_pods(namespace, name)
                if p["status"].get("phase") == "Running" and not p["metadata"].get("deletionTimestamp")]

    # -- scenarios -------------------------------------------------------------------------
    def test_g_kueue_quota_between_two_teams_a_job_beyond_it_waits_without_pods(self):
        self.team_namespaces()
        first_install = not getattr(type(self), "kueue_up", False)
        if first_install:
            # Kueue's API not served yet: a labelled job waits, and makes no pod.
            self.kueue_job("qb-1", "team-b", 1, 2, queue="team-b")
            self.wait_queued("team-b", "qb-1", "KueueNotServed")
            self.assert_no_pods("team-b", "qb-1", 3)
        t0 = time.monotonic()
        self.kueue_ready()
        if first_install:
            # Once Kueue is served, the waiting job gets its Workload and runs: the operator,
            # started before Kueue, finds it without a restart (discovery asked again).
            wl = self.wait_admitted("team-b", "qb-1", 120)
            log(f"kueue.sh -> the job that waited (KueueNotServed) admitted: "
                f"{time.monotonic() - t0:.1f}s")
            self.check_workload_shape(wl, "team-b", "qb-1", 1)
        else:
            self.kueue_job("qb-1", "team-b", 1, 2, queue="team-b")

        pods = pod_watch(self.cp_env, "team-a")
        jobs = job_watch(self.cp_env, "team-a")
        try:
            # qa-1 must hold the quota until qa-2's wait is proven: at a tenth of a core, 60
            # epochs take about 30 s on an idle machine (unthrottled they take 5, less than
            # pod start-up under load), longer on a busy one.
            t_qa1 = time.monotonic()
            self.kueue_job("qa-1", "team-a", 2, 60, queue="team-a", cpu_limit="100m")
            wl1 = self.wait_admitted("team-a", "qa-1")
            self.check_workload_shape(wl1, "team-a", "qa-1", 2)
            self.assertEqual(wl1["status"]["admission"]["podSetAssignments"][0]["count"], 2)
            running = self.live_pods("team-a", "qa-1", 2)
            self.check_flavor_applied(running)
            self.assertEqual(self.queue_column("team-a", "qa-1"), "team-a")

            # Beyond team a's quota of 2: Queued, Kueue's reason and a message naming the queue.
            self.kueue_job("qa-2", "team-a", 2, 2, queue="team-a")
            self.wait_queued("team-a", "qa-2", "Pending", 30)

            def says_why():
                wl = self.workload("team-a", "qa-2")
                reserved = conditions(wl).get("QuotaReserved") or {}
                queued = conditions(self.tj("team-a", "qa-2"))["Queued"]
                return (reserved.get("status") == "False" and reserved.get("message")
                        and reserved["message"] in queued["message"]), (reserved, queued)
            reserved, queued = self.wait_job("team-a", "qa-2", "the Queued message carrying "
                                             "Kueue's QuotaReserved message", 20, says_why)
            self.assertEqual(reserved["reason"], queued["reason"])
            self.assertIn("team-a", queued["message"])
            wl2 = self.workload("team-a", "qa-2")
            self.check_workload_shape(wl2, "team-a", "qa-2", 2)
            self.assertEqual(self.queue_column("team-a", "qa-2"), "team-a")
            reads = self.assert_no_pods("team-a", "qa-2", 5)
            self.assertEqual(self.tj("team-a", "qa-1")["status"]["phase"], "Running",
                             "qa-1 ended before qa-2's wait was seen: qa-2 proved nothing")
            # The other team is not held back by team a's full queue.
            self.wait_job_phase("team-b", "qb-1", "Succeeded", 300)

            self.wait_job_phase("team-a", "qa-1", "Succeeded", 300)
            t1 = time.monotonic()
            log(f"quota: qa-1 (60 epochs at 100m CPU a pod) submitted -> Succeeded "
                f"{t1 - t_qa1:.1f}s")
            finished1 = self.wait_finished("team-a", "qa-1")
            wl2 = self.wait_admitted("team-a", "qa-2", 60)
            log(f"quota: qa-2 waited with no pod ({reads} reads in 5 s); qa-1 Succeeded -> "
                f"qa-2 admitted {time.monotonic() - t1:.1f}s")
            self.wait_job_phase("team-a", "qa-2", "Succeeded", 300)
            self.wait_finished("team-a", "qa-2")
            self.wait_finished("team-b", "qb-1")
        finally:
            pods.stop()
            jobs.stop()

        # Every pod of qa-2 the watch ever saw was created after its admission, which came
        # after qa-1's Workload finished.
        admitted2 = stamp(conditions(wl2)["Admitted"]["lastTransitionTime"])
        finished = stamp(conditions(finished1)["Finished"]["lastTransitionTime"])
        self.assertGreaterEqual(admitted2, finished)
        qa2_pods = {o["metadata"]["uid"]: o for _, _, o in pods.of(lambda o: job_of(o) == "qa-2")}
        self.assertEqual(len(qa2_pods), 2, "qa-2's pods (one attempt of 2)")
        for p in qa2_pods.values():
            self.assertGreaterEqual(stamp(p["metadata"]["creationTimestamp"]), admitted2,
                                    f"{p['metadata']['name']} created before admission")
        seq = phases(jobs, "qa-2")
        self.assertEqual(seq[0], "Queued(Pending)", seq)
        self.assertEqual(seq[-1], "Succeeded", seq)
        self.assertIn("Running", seq)
        reasons = [e["reason"] for e in self.job_events("team-a", "qa-2")]
        self.assertIn("Admitted", reasons)
        status = self.tj("team-a", "qa-2")["status"]
        self.assertEqual((status["restarts"], status["disruptions"], status["attempt"]), (0, 0, 0))
        log(f"quota: qa-2 phases {seq}")

        # Without the label, a job is none of Kueue's business: no Workload, pods at once.
        self.kueue_job("plain", "team-b", 1, 1, queue=None)
        self.wait_job_phase("team-b", "plain", "Succeeded", 300)
        self.assertEqual(self.workloads("team-b", "plain"), [])
        reasons = [e["reason"] for e in self.job_events("team-b", "plain")]
        self.assertNotIn("Admitted", reasons)

    def test_h_kueue_preemption_checkpoints_and_resumes_without_losing_a_step(self):
        self.kueue_ready()
        ns, low, high = self.jobs_ns, "kq-low", "kq-high"
        pods = pod_watch(self.cp_env, ns)
        jobs = job_watch(self.cp_env, ns)
        epochs = 12
        try:
            # Every iteration in the rank-0 log and scalars.json; no periodic checkpoint inside
            # an epoch, so the only iteration checkpoint is the one taken on SIGTERM.
            self.kueue_job(low, ns, 2, epochs, priority="ddp3d-low",
                           cfg=["default_hooks.logger.interval=1"])
            wl = self.wait_admitted(ns, low)
            self.assertEqual(wl["spec"].get("priority"), 100, wl["spec"])
            pods0, before = self.wait_steps(low, 0, 2, 2 * TOY_ITERS_PER_EPOCH)
            self.check_flavor_applied(pods0)
            st0 = self.job_status(low)

            t_submit = time.monotonic()
            self.kueue_job(high, ns, 2, 2, priority="ddp3d-high")

            def evicted():
                w = self.workload(ns, low)
                c = conditions(w).get("Evicted") or {}
                return c.get("status") == "True", w
            wl_ev = self.wait_job(ns, low, "Workload Evicted", 60, evicted, interval=0.2)
            t_evicted = time.monotonic()
            self.assertTrue(conditions(wl_ev)["Evicted"]["reason"].startswith("Preempted"),
                            conditions(wl_ev)["Evicted"])
            # Queued/Evicted while its pods stop (the watch sees every status; Kueue's Pending
            # follows once the quota is released).
            def queued_evicted():
                seen = [o["status"] for _, _, o in jobs.of(lambda o: o["metadata"]["name"] == low)
                        if (o.get("status") or {}).get("phase") == "Queued"
                        and (conditions(o).get("Queued") or {}).get("reason") == "Evicted"]
                return bool(seen), (seen[:1] or phases(jobs, low))
            st = self.wait_job(ns, low, "phase Queued (Evicted)", 60, queued_evicted)[0]
            self.assertEqual((st["restarts"], st["disruptions"]), (st0["restarts"], st0["disruptions"]))

            # The preemptor waits until the low job's pods are gone and its quota released.
            def released():
                w = self.workload(ns, low)
                c = conditions(w).get("QuotaReserved") or {}
                return (not (w.get("status") or {}).get("admission")
                        and c.get("status") == "False"), w.get("status")
            self.wait_job(ns, low, "admission released", 120, released, interval=0.25)
            t_released = time.monotonic()
            self.assertEqual([p for p in self.job_pods(ns, low)], [],
                             "the low job's admission was released while it had pods")
            # The SIGTERM checkpoint, looked at now: max_keep_ckpts prunes it later.
            sigterm_ckpts = [os.path.basename(f) for f in glob.glob(
                os.path.join(self.volume, "work_dirs", low, "iter_*.pth"))]
            self.wait_admitted(ns, high)
            high_pods = self.live_pods(ns, high, 2)
            t_high = time.monotonic()
            self.wait_job_phase(ns, high, "Succeeded", 300)
            t_high_done = time.monotonic()

            # Re-admitted: a new attempt resumes from the SIGTERM checkpoint.
            self.wait_admitted(ns, low, 120)
            attempt = st0["attempt"] + 1
            new = self.running_pods(low, attempt, 2)

            def first_step():
                got = self.steps(new)
                return all(s is not None and s >= 1 for s in got), got
            self.wait("the first training step of the re-admitted attempt", 300, first_step,
                      interval=0.25)
            t_resumed = time.monotonic()
            self.wait_job_phase(ns, low, "Succeeded", 600)
            self.wait_finished(ns, low)
            self.wait_finished(ns, high)
        finally:
            pods.stop()
            jobs.stop()

        status = self.job_status(low)
        self.assertEqual((status["restarts"], status["disruptions"], status["attempt"]),
                         (st0["restarts"], st0["disruptions"], attempt), status)
        # The evicted attempt's ranks were stopped gracefully: checkpointed and exited 201.
        exits = {}
        gone = {}
        for t, kind, o in pods.of(lambda o: job_of(o) == low
                                  and o["metadata"]["labels"].get("ddp3d.io/attempt") == str(st0["attempt"])):
            for cs in o.get("status", {}).get("containerStatuses", []):
                term = (cs.get("state") or {}).get("terminated")
                if term:
                    exits[o["metadata"]["name"]] = term["exitCode"]
            if kind == "DELETED":
                gone[o["metadata"]["name"]] = t
        # Stopped by SIGTERM, not killed at the grace period (137). Each pod's code is its
        # launcher's: 201 when its rank exited 201; 143 (the forwarded SIGTERM) has been seen
        # for one of the two pods stopped at the same moment, while the checkpoint and the
        # iteration records below still showed no step lost — a known weakness (docs/e2e.md).
        self.assertEqual(len(exits), 2, exits)
        self.assertTrue(set(exits.values()) <= {PREEMPTED_EXIT, 143}, exits)
        self.assertIn(PREEMPTED_EXIT, exits.values(), exits)
        if sorted(exits.values()) != [PREEMPTED_EXIT] * 2:
            log(f"preemption: rank pods exited {exits} (not both {PREEMPTED_EXIT})")
        self.assertEqual(len(gone), 2, gone)
        high_created = min(t for t, kind, o in pods.of(lambda o: job_of(o) == high) if kind == "ADDED")
        self.assertGreater(high_created, max(gone.values()),
                           "a pod of the preemptor existed before the preempted pods were gone")

        # Every iteration exactly once across the two attempts, from rank 0's per-iteration
        # records (scalars.json of each run, on the shared volume).
        runs = sorted(glob.glob(os.path.join(self.volume, "work_dirs", low, "*", "vis_data",
                                             "scalars.json")))
        self.assertEqual(len(runs), 2, runs)
        iters = []
        for path in runs:
            with open(path) as f:
                iters.append([r["iter"] for r in map(json.loads, filter(str.strip, f)) if "iter" in r])
        first, second = iters
        stopped = first[-1]
        self.assertEqual(first, list(range(1, stopped + 1)), "attempt 0 skipped or repeated")
        self.assertEqual(second, list(range(stopped + 1, epochs * TOY_ITERS_PER_EPOCH + 1)),
                         "the resumed attempt did not start at the next iteration")
        self.assertEqual(sigterm_ckpts, [f"iter_{stopped}.pth"],
                         "the checkpoint on SIGTERM, at the last iteration run")
        self.assertGreaterEqual(stopped, max(before))
        reasons = [e["reason"] for e in self.job_events(ns, low)]
        self.assertIn("Evicted", reasons)
        self.assertIn("Admitted", reasons)
        seq = phases(jobs, low)
        self.assertIn("Queued(Evicted)", seq)
        self.assertEqual(seq[-1], "Succeeded", seq)
        log(f"preemption: high submitted -> low Evicted {t_evicted - t_submit:.1f}s -> quota "
            f"released (pods gone) {t_released - t_evicted:.1f}s -> high's pods Running "
            f"{t_high - t_released:.1f}s; high Succeeded {t_high_done - t_high:.1f}s later")
        log(f"preemption -> first resumed step: {t_resumed - t_evicted:.1f}s (of which the "
            f"preemptor's run {t_high_done - t_high:.1f}s; its Success -> first resumed step "
            f"{t_resumed - t_high_done:.1f}s); stopped at iteration {stopped} (steps reported "
            f"{before}), resumed at {stopped + 1}: iterations 1..{epochs * TOY_ITERS_PER_EPOCH} "
            f"each once; low phases {seq}")
        del high_pods

    def test_i_kueue_partial_admission_runs_an_elastic_job_at_the_admitted_count(self):
        self.kueue_ready()
        ns, name = self.jobs_ns, "kq-elastic"
        pods = pod_watch(self.cp_env, ns)
        try:
            t0 = time.monotonic()
            self.kueue_job(name, ns, 3, 6,
                           elastic={"minNodes": 2, "placementTimeoutSeconds": 15,
                                    "growIntervalSeconds": 5})
            wl = self.wait_admitted(ns, name)
            self.check_workload_shape(wl, ns, name, 3, min_count=2)
            self.assertEqual(wl["status"]["admission"]["podSetAssignments"][0]["count"], 2,
                             wl["status"]["admission"])
            running = self.live_pods(ns, name, 2)
            log(f"partial admission: submitted -> 2 of 3 pods Running {time.monotonic() - t0:.1f}s")
            self.check_flavor_applied(running)
            self.assertEqual(self.job_status(name).get("size"), 2, self.job_status(name))
            for p in running:
                env = {e["name"]: e.get("value") for e in p["spec"]["containers"][0]["env"]}
                self.assertEqual((env.get("NNODES"), env.get("WORLD_SIZE")), ("2", "2"))
            self.wait_job_phase(ns, name, "Succeeded", 300)
            self.wait_finished(ns, name)
        finally:
            pods.stop()
        status = self.job_status(name)
        self.assertEqual(status.get("size"), 2, status)
        created = {o["metadata"]["uid"] for _, kind, o in pods.of(lambda o: job_of(o) == name)}
        self.assertEqual(len(created), 2, f"pods beyond the admitted count: {len(created)}")
        log(f"partial admission: Succeeded at size 2 in {time.monotonic() - t0:.1f}s, "
            f"{len(created)} pods in all")

    def test_j_kueue_operator_restart_keeps_one_workload_per_job_and_no_duplicate_pod(self):
        self.kueue_ready()
        ns, admitted, queued = self.jobs_ns, "kq-run", "kq-wait"
        # Long enough to outlive the restart whatever the machine's load; deleted once it has
        # shown that it trains on under the new operator.
        self.kueue_job(admitted, ns, 2, 400)
        self.wait_admitted(ns, admitted)
        before = {p["metadata"]["uid"] for p in self.live_pods(ns, admitted, 2)}
        self.kueue_job(queued, ns, 1, 2)
        self.wait_queued(ns, queued, "Pending", 30)
        workloads = {n: self.workload(ns, n)["metadata"]["uid"] for n in (admitted, queued)}

        t0 = time.monotonic()
        log(f"operator pod deleted -> new one Ready: {self.restart_operator():.1f}s")
        # Give the new operator time to reconcile both jobs, then look.
        time.sleep(10)
        for n in (admitted, queued):
            wls = self.workloads(ns, n)
            self.assertEqual([w["metadata"]["uid"] for w in wls], [workloads[n]],
                             f"{n}: Workloads after the operator's restart")
        now = self.job_pods(ns, admitted)
        self.assertEqual({p["metadata"]["uid"] for p in now}, before,
                         "the admitted job's pods were replaced or duplicated")
        st = self.job_status(admitted)
        self.assertEqual((st.get("phase"), st["attempt"], st["restarts"], st["disruptions"]),
                         ("Running", 0, 0, 0), st)
        self.assertEqual(self.job_pods(ns, queued), [], "the queued job got pods")
        self.assertEqual(self.job_status(queued)["phase"], "Queued")
        # The admitted job trains on, on the same pods.
        first = self.steps(now)

        def training():
            got = self.steps(now)
            return all(a is not None and b is not None and b > a for a, b in zip(first, got)), got
        self.wait(f"{admitted} training on after the restart", 60, training, interval=1)

        # Its deletion lets its Workload go (finalizer removed), which frees the quota for
        # the queued one.
        self.kubectl("-n", ns, "delete", "trainingjob", admitted, "--wait=true", "--timeout=120s")
        self.wait(f"{admitted}'s Workload gone", 60,
                  lambda: (not self.workloads(ns, admitted), self.workloads(ns, admitted)))
        self.wait_admitted(ns, queued, 60)
        self.wait_job_phase(ns, queued, "Succeeded", 300)
        self.wait_finished(ns, queued)
        self.assertEqual([w["metadata"]["uid"] for w in self.workloads(ns, queued)],
                         [workloads[queued]])
        st = self.job_status(queued)
        self.assertEqual((st["attempt"], st["restarts"], st["disruptions"]), (0, 0, 0), st)
        log(f"operator restart: one Workload per job, the admitted job's pods kept and training "
            f"(steps {first}), the queued one admitted once the quota freed and Succeeded, "
            f"{time.monotonic() - t0:.1f}s after the operator pod's deletion")

    def test_k_kueue_missing_queue_deleted_workload_and_pods_ready_timeout(self):
        self.kueue_ready()
        ns = self.jobs_ns
        # Hostile input (no Kueue involved): a queue name that is no label value is refused by
        # the API server at create, naming the labels and the value.
        for bad in ("q" * 70, "team a"):
            res = self.kueue_job("k-bad-label", ns, 1, 1, queue=bad, check=False)
            self.assertNotEqual(res.returncode, 0, f"label {QUEUE_LABEL}={bad!r} accepted")
            self.assertIn("metadata.labels", res.stderr)
            self.assertIn(f'"{bad}"', res.stderr)
        self.assertNotEqual(self.kubectl("-n", ns, "get", "tj", "k-bad-label", check=False).returncode, 0)

        late, rerun, stuck = "k-late", "k-rerun", "k-stuck"  # jobs; `late` is also its queue
        pods = pod_watch(self.cp_env, ns)
        jobs = job_watch(self.cp_env, ns)
        wls = Watch(self.cp_env, f"/apis/kueue.x-k8s.io/v1beta2/namespaces/{ns}/workloads?watch=1")
        try:
            t0 = time.monotonic()
            self.kueue_job(late, ns, 1, 2, queue=late)  # no LocalQueue of that name yet
            self.kueue_job(rerun, ns, 1, 400)           # long: deleted once it has run again

            # 1. A LocalQueue that does not exist: Kueue's reason and words in the job's status.
            def says_missing():
                w = self.workloads(ns, late)
                reserved = (conditions(w[0]).get("QuotaReserved") or {}) if w else {}
                st = self.tj(ns, late).get("status") or {}
                queued = conditions({"status": st}).get("Queued") or {}
                return (reserved.get("status") == "False" and reserved.get("message")
                        and st.get("phase") == "Queued" and queued.get("status") == "True"
                        and queued.get("reason") == reserved.get("reason")
                        and reserved["message"] in queued.get("message", "")), (reserved, queued)
            reserved, queued = self.wait_job(ns, late, "Queued with Kueue's words on the missing "
                                             "LocalQueue", 30, says_missing)
            t_missing = time.monotonic()
            self.assertEqual(reserved["reason"], "Inadmissible", reserved)
            self.assertIn(f"LocalQueue {late}", reserved["message"])
            self.assertIn("exist", reserved["message"])
            self.assertEqual(self.job_pods(ns, late), [])
            self.kubectl("apply", "-f", "-", stdin=json.dumps({
                "apiVersion": API, "kind": "LocalQueue", "metadata": {"name": late, "namespace": ns},
                "spec": {"clusterQueue": "team-a"}}))
            t_lq = time.monotonic()
            self.wait_admitted(ns, late, 30)
            t_late = time.monotonic()
            self.assertEqual([e for e in pods.of(lambda o: job_of(o) == late)
                              if e[0] < t_lq], [], f"{late} had a pod before its LocalQueue")
            log(f"missing LocalQueue: submitted -> Queued ({reserved['reason']}: "
                f"{reserved['message']!r}) {t_missing - t0:.1f}s; LocalQueue created -> "
                f"admitted {t_late - t_lq:.1f}s")

            # 2. The Workload deleted by hand while its job runs.
            self.wait_job_phase(ns, rerun, "Running", 120)
            old_wl = self.workload(ns, rerun)
            old_pods = {p["metadata"]["uid"] for p in self.live_pods(ns, rerun, 1)}
            st0 = self.job_status(rerun)
            t_del = time.monotonic()
            self.kubectl("-n", ns, "delete", WORKLOADS, old_wl["metadata"]["name"], "--wait=false")
            self.wait_job(ns, rerun, "its pods gone", 60, lambda: (
                not old_pods & {p["metadata"]["uid"] for p in self.job_pods(ns, rerun)},
                [p["metadata"]["name"] for p in self.job_pods(ns, rerun)]), interval=0.25)

            def new_admitted():
                w = self.workloads(ns, rerun)
                ok = (len(w) == 1 and w[0]["metadata"]["uid"] != old_wl["metadata"]["uid"]
                      and (conditions(w[0]).get("Admitted") or {}).get("status") == "True")
                return ok, [(x["metadata"]["uid"], x["metadata"].get("deletionTimestamp"),
                             {k: v["status"] for k, v in conditions(x).items()}) for x in w]
            self.wait_job(ns, rerun, "a new Workload admitted", 60, new_admitted, interval=0.25)
            new_wl = self.workload(ns, rerun)
            t_new = time.monotonic()
            self.check_workload_shape(new_wl, ns, rerun, 1)
            attempt = st0["attempt"] + 1
            self.running_pods(rerun, attempt, 1)
            t_rerun = time.monotonic()
            self.wait_job_phase(ns, rerun, "Running", 60)
            st = self.job_status(rerun)
            self.assertEqual((st["attempt"], st["restarts"], st["disruptions"]),
                             (attempt, st0["restarts"], st0["disruptions"]), st)
            self.assertIn("Queued(WorkloadDeleted)", phases(jobs, rerun))
            # In order: the old pods deleted, the old Workload gone (our finalizer removed),
            # then the new Workload created.
            old_uid, new_uid = old_wl["metadata"]["uid"], new_wl["metadata"]["uid"]
            pods_deleted = [t for t, kind, o in pods.of(lambda o: o["metadata"]["uid"] in old_pods)
                            if kind == "DELETED"]
            old_deleted = [t for t, kind, o in wls.of(lambda o: o["metadata"]["uid"] == old_uid)
                           if kind == "DELETED"]
            new_added = [t for t, kind, o in wls.of(lambda o: o["metadata"]["uid"] == new_uid)
                         if kind == "ADDED"]
            self.assertTrue(pods_deleted and old_deleted and new_added,
                            "watch events: old pod DELETED, old Workload DELETED, new ADDED")
            self.assertLess(max(pods_deleted), min(old_deleted))
            self.assertLess(min(old_deleted), min(new_added))
            # Times from the deletion, as the watches saw them (the polls lag behind).
            log(f"Workload deleted by hand: -> pod gone {max(pods_deleted) - t_del:.1f}s -> old "
                f"Workload gone {min(old_deleted) - t_del:.1f}s -> new one created "
                f"{min(new_added) - t_del:.1f}s, admitted (poll) {t_new - t_del:.1f}s -> attempt "
                f"{attempt} Running (poll) {t_rerun - t_del:.1f}s; phases {phases(jobs, rerun)}")
            self.kubectl("-n", ns, "delete", "trainingjob", rerun, "--wait=true", "--timeout=120s")
            self.wait_job_phase(ns, late, "Succeeded", 300)
            self.wait_finished(ns, late)
        finally:
            pods.stop()
            jobs.stop()
            wls.stop()
            self.kubectl("-n", ns, "delete", "localqueue", late, "--ignore-not-found", check=False)
        log(f"missing LocalQueue: {late} Succeeded, {time.monotonic() - t_lq:.1f}s after its "
            f"LocalQueue was created")

        # 3. waitForPodsReady as Kueue documents it: Kueue restarted with a 20 s timeout.
        try:
            res, took = self.kueue_sh("--wait-for-pods-ready", "20s")
            self.assertIn("configuration changed: restarting kueue", res.stderr)
            with open(os.path.join(self.dir, "kueue", "config.yaml")) as f:
                self.assertIn("waitForPodsReady:\n  timeout: 20s", f.read())
            self.wait_queues_active()
            log(f"kueue.sh --wait-for-pods-ready 20s (Kueue restarted): {took:.1f}s")
            # Its rank's pod can never be scheduled: no node has that label.
            self.kueue_job(stuck, ns, 1, 1, node_selector={"ddp3d.io/nowhere": "true"})
            wl = self.wait_admitted(ns, stuck, 30)
            admitted_at = stamp(conditions(wl)["Admitted"]["lastTransitionTime"])

            def waiting_for_start():
                w = self.workload(ns, stuck)
                c = conditions(w).get("PodsReady") or {}
                ps = self.job_pods(ns, stuck)
                return (c.get("status") == "False" and c.get("reason") == "WaitForStart"
                        and len(ps) == 1 and ps[0]["status"].get("phase") == "Pending"), \
                    (c, [(p["metadata"]["name"], p["status"].get("phase")) for p in ps])
            self.wait_job(ns, stuck, "PodsReady False/WaitForStart, its pod Pending", 15,
                          waiting_for_start)

            def evicted():
                w = self.workload(ns, stuck)
                return (conditions(w).get("Evicted") or {}).get("status") == "True", w
            wl_ev = self.wait_job(ns, stuck, "Workload Evicted", 60, evicted, interval=0.25)
            t_ev = time.monotonic()
            ev = conditions(wl_ev)["Evicted"]
            self.assertEqual(ev["reason"], "PodsReadyTimeout", ev)
            after = stamp(ev["lastTransitionTime"]) - admitted_at
            self.assertGreaterEqual(after, 19, "evicted before the timeout")  # 1 s timestamps
            self.assertEqual((conditions(wl_ev).get("PodsReady") or {}).get("reason"), "WaitForStart",
                             "the PodsReady condition the operator kept until the eviction")

            def released():
                w = self.workload(ns, stuck)
                st = self.tj(ns, stuck).get("status") or {}
                queued = conditions({"status": st}).get("Queued") or {}
                return (not (w.get("status") or {}).get("admission")
                        and (conditions(w).get("QuotaReserved") or {}).get("status") == "False"
                        and st.get("phase") == "Queued" and queued.get("reason") == "Evicted"
                        and not self.job_pods(ns, stuck)), (st, w.get("status"))
            st = self.wait_job(ns, stuck, "Queued (Evicted), no pod, the admission released", 30,
                               released, interval=0.25)[0]
            t_rel = time.monotonic()
            self.assertIn("PodsReadyTimeout", conditions({"status": st})["Queued"]["message"])
            self.assertEqual((st["restarts"], st["disruptions"]), (0, 0), st)
            log(f"waitForPodsReady 20s: admitted -> Evicted (PodsReadyTimeout) {after:.0f}s (API "
                f"timestamps) -> pod gone and admission released {t_rel - t_ev:.1f}s; restarts 0")
            self.kubectl("-n", ns, "delete", "trainingjob", stuck, "--wait=true", "--timeout=60s")
            self.wait(f"{stuck}'s Workload gone", 30,
                      lambda: (not self.workloads(ns, stuck), self.workloads(ns, stuck)))
        finally:
            # Kueue as kueue_ready started it (without waitForPodsReady unless the environment's
            # KUEUE_WAIT_FOR_PODS_READY asks for it).
            res, took = self.kueue_sh()
            if os.environ.get("KUEUE_WAIT_FOR_PODS_READY", "off") in ("", "off"):
                with open(os.path.join(self.dir, "kueue", "config.yaml")) as f:
                    self.assertNotIn("waitForPodsReady", f.read())
            self.wait_queues_active()
            log(f"kueue.sh (waitForPodsReady off again, Kueue restarted): {took:.1f}s")
