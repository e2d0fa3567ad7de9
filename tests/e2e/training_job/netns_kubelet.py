"""The e2e harness's kubelet: runs the pods of one namespace as local processes.

There is no kubelet, scheduler or container runtime next to the test control plane, so this
plays all three for the pods of one namespace, through the real API:

- scheduler: binds every new pod to node NODE_NAME (pods/binding), so that deleting a running
  pod is graceful exactly as on a cluster (the API server only sets deletionTimestamp, and
  the kubelet must stop the container and then remove the pod);
- runtime: runs container 0's command+args with its env (values, fieldRefs and
  secretKeyRefs; `$(VAR)` expanded as Kubernetes
  does) inside the pod's own network namespace and UTS namespace (hostname = pod hostname),
  cwd = the source tree (the image's WORKDIR), `ddp3d` = the built binary (DDP3D_BIN and
  PATH); stdout+stderr go to a log file per pod instance;
- DNS: each pod's /etc/hosts carries the records a headless Service gives: for every pod
  that has an IP and whose `subdomain` names a headless Service selecting it (ready or not,
  when publishNotReadyAddresses), `<hostname>.<subdomain>.<ns>.svc.cluster.local` and
  `….svc`;
- status: Running with podIP once the process starts, then Succeeded/Failed with the exit
  code in containerStatuses[0].state.terminated (128 + signal when killed by a signal);
- deletion: SIGTERM to every process of the pod, SIGKILL after the grace period (capped),
  the network namespace removed, the pod deleted with grace 0.

The tests drive it with `hold()` (do not start matching pods yet) and read `runs`.
"""

import base64
import ctypes
import datetime
import os
import re
import signal
import subprocess
import threading
import time

from kube_api import ApiError
from pod_network import PodNetwork, kill_netns_processes, netns_pids

NODE_NAME = "ddp3d-e2e-node"
POLL_S = 0.2
MAX_GRACE_S = 5.0

_libc = ctypes.CDLL(None, use_errno=True)
_PR_SET_PDEATHSIG = 1


def die_with_parent():
    # Processes started by the harness must not outlive it when it is killed.
    _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def _now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


_VAR_REF = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")


def expand(text, env):
    """Kubernetes' $(VAR) expansion: defined names are replaced, $$ escapes, the rest stays."""
    def sub(m):
        if m.group(0) == "$$":
            return "$"
        return env.get(m.group(1), m.group(0))
    return _VAR_REF.sub(sub, text)


def container_env(container, pod, secret_value=None):
    """The container's environment as a kubelet builds it (value, fieldRef and secretKeyRef
    entries; `secret_value(name, key)` reads a Secret of the pod's namespace)."""
    env = {}
    for e in container.get("env", []):
        if "value" in e:
            env[e["name"]] = expand(e["value"], env)
        elif "valueFrom" in e and "fieldRef" in e["valueFrom"]:
            path = e["valueFrom"]["fieldRef"]["fieldPath"]
            field = {"metadata.name": pod["metadata"]["name"],
                     "metadata.namespace": pod["metadata"]["namespace"],
                     "metadata.uid": pod["metadata"]["uid"],
                     "spec.nodeName": NODE_NAME}.get(path)
            if field is None:
                raise ValueError(f"env {e['name']}: fieldRef {path} is not supported by the e2e kubelet")
            env[e["name"]] = field
        elif "valueFrom" in e and "secretKeyRef" in e["valueFrom"] and secret_value:
            ref = e["valueFrom"]["secretKeyRef"]
            env[e["name"]] = secret_value(ref["name"], ref["key"])
        else:
            env[e["name"]] = ""
    return env


class PodRun:
    """One started pod instance (one uid)."""

    def __init__(self, pod, netns, ip, log_path, proc):
        self.name = pod["metadata"]["name"]
        self.uid = pod["metadata"]["uid"]
        self.labels = dict(pod["metadata"].get("labels", {}))
        self.netns, self.ip, self.log_path, self.proc = netns, ip, log_path, proc
        self.started_at = _now()
        self.exit_code = None
        self.reported_terminal = False
        self.network_up = True
        self.term_deadline = None
        self.terminal_status = None  # the pod status the API server stored for the end

    def log(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()


class NetnsKubelet:
    def __init__(self, api, namespace, source_dir, ddp3d_bin, log_dir):
        self.api, self.ns = api, namespace
        self.source_dir, self.ddp3d_bin, self.log_dir = source_dir, ddp3d_bin, log_dir
        self.runs = {}  # uid -> PodRun, every instance ever started (history for the tests)
        self.errors = []
        self._holds = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = None
        self._network = PodNetwork()

    # -- control from the test -------------------------------------------------------
    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    def start(self):
        os.makedirs(self.log_dir, exist_ok=True)
        self._network.open()
        self._thread = threading.Thread(target=self._loop, name="netns-kubelet", daemon=True)
        self._thread.start()

    def stop(self):
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=30)
        for run in list(self.runs.values()):
            if run.proc.poll() is None:
                kill_netns_processes(run.netns)
                run.proc.kill()
                run.proc.wait(timeout=10)
        self._network.close()

    def hold(self, predicate):
        """Pods for which predicate(pod) is true are bound but not started until release."""
        with self._lock:
            self._holds.append(predicate)
        return predicate

    def release(self, predicate):
        with self._lock:
            if predicate in self._holds:
                self._holds.remove(predicate)

    def runs_of(self, pod_name):
        with self._lock:
            return [r for r in self.runs.values() if r.name == pod_name]

    def processes(self, run):
        """[(pid, argv)] of every process inside the pod instance's network namespace."""
        out = []
        for pid in netns_pids(run.netns):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    argv = [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
            except OSError:
                continue
            out.append((pid, argv))
        return out

    # -- the loop -------------------------------------------------------------------
    def _loop(self):
        while not self._stop.is_set():
            try:
                self._sync()
            except ApiError as e:
                # Transient server states (429 while storage initializes, 5xx) are retried
                # on the next pass, as a kubelet does; anything else is a harness error.
                if e.status not in (429, 500, 503, 504):
                    self.errors.append(str(e))
            except OSError:
                pass  # connection refused/reset or timeout (urllib's URLError): retry
            except Exception as e:  # noqa: BLE001 — surfaced to the test through .errors
                self.errors.append(f"{type(e).__name__}: {e}")
                if len(self.errors) > 50:
                    return
            self._stop.wait(POLL_S)

    def _sync(self):
        pods = self.api.list_pods(self.ns)
        services = self.api.get(f"/api/v1/namespaces/{self.ns}/services")["items"]
        seen = set()
        for pod in pods:
            uid = pod["metadata"]["uid"]
            seen.add(uid)
            run = self.runs.get(uid)
            if run is not None and run.exit_code is None and run.proc.poll() is not None:
                self._on_exit(run)
            if pod["metadata"].get("deletionTimestamp"):
                self._on_deleting(pod, run)
                continue
            if not pod["spec"].get("nodeName"):
                self._bind(pod)
                continue
            if run is None:
                with self._lock:
                    held = any(h(pod) for h in self._holds)
                if not held:
                    self._start(pod, pods, services)
            elif run.exit_code is not None and not run.reported_terminal:
                self._report_terminal(pod, run)
        # Pods removed outright (grace 0 by someone else): stop what is left of them.
        for uid, run in list(self.runs.items()):
            if uid not in seen and run.network_up:
                self._teardown(run)
        self._publish_dns(pods, services)

    def _bind(self, pod):
        meta = pod["metadata"]
        binding = {"apiVersion": "v1", "kind": "Binding",
                   "metadata": {"name": meta["name"], "namespace": self.ns, "uid": meta["uid"]},
                   "target": {"apiVersion": "v1", "kind": "Node", "name": NODE_NAME}}
        try:
            self.api.post(f"/api/v1/namespaces/{self.ns}/pods/{meta['name']}/binding", binding)
        except ApiError as e:
            if e.status not in (404, 409):  # gone or already bound meanwhile
                raise

    def _secret_value(self, name, key):
        """As the kubelet does (the Node authorizer lets it read Secrets its pods reference);
        a missing Secret or key raises, and the pod is retried on the next sync, as the
        kubelet's CreateContainerConfigError is."""
        secret = self.api.get(f"/api/v1/namespaces/{self.ns}/secrets/{name}")
        return base64.b64decode(secret["data"][key]).decode()

    def _start(self, pod, pods, services):
        meta, spec = pod["metadata"], pod["spec"]
        c = spec["containers"][0]
        env = container_env(c, pod, self._secret_value)
        argv = [expand(a, env) for a in c.get("command", []) + c.get("args", [])]
        if not argv:
            raise ValueError(f"pod {meta['name']}: container has no command (the image's "
                             "entrypoint is not known to the e2e kubelet)")
        hostname = spec.get("hostname") or meta["name"]
        netns, ip = self._network.add_pod(meta["uid"])
        attempt = meta.get("labels", {}).get("ddp3d.io/attempt", "x")
        log_path = os.path.join(self.log_dir, f"{meta['name']}.attempt{attempt}.{meta['uid'][:8]}.log")
        # The image's environment: ddp3d on PATH, the source tree as WORKDIR.
        full_env = {"PATH": os.path.dirname(self.ddp3d_bin) + ":" + os.environ.get("PATH", ""),
                    "HOME": os.environ.get("HOME", "/root"), "HOSTNAME": hostname,
                    "DDP3D_BIN": self.ddp3d_bin, "LANG": "C.UTF-8"}
        full_env.update(env)
        cmd = ["ip", "netns", "exec", netns, "unshare", "--uts", "--",
               "sh", "-c", 'hostname "$0" && exec "$@"', hostname, *argv]
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(cmd, cwd=self.source_dir, env=full_env, stdin=subprocess.DEVNULL,
                                    stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                    preexec_fn=die_with_parent)
        run = PodRun(pod, netns, ip, log_path, proc)
        with self._lock:
            self.runs[meta["uid"]] = run
        self._publish_dns(pods, services)
        self._patch_status(pod, {
            "phase": "Running", "podIP": ip, "podIPs": [{"ip": ip}], "startTime": run.started_at,
            "conditions": self._conditions(True),
            "containerStatuses": [{
                "name": c["name"], "image": c.get("image", "ddp3d-worker"), "imageID": "",
                "ready": True, "started": True, "restartCount": 0,
                "state": {"running": {"startedAt": run.started_at}}}]})

    def _on_exit(self, run):
        code = run.proc.returncode
        run.exit_code = 128 - code if code < 0 else code  # killed by signal N -> 128 + N
        # The container is gone when its main process is: nothing of it may linger.
        kill_netns_processes(run.netns)

    def _report_terminal(self, pod, run):
        c = pod["spec"]["containers"][0]
        run.terminal_status = self._patch_status(pod, {
            "phase": "Succeeded" if run.exit_code == 0 else "Failed",
            "conditions": self._conditions(False),
            "containerStatuses": [{
                "name": c["name"], "image": c.get("image", "ddp3d-worker"), "imageID": "",
                "ready": False, "started": False, "restartCount": 0,
                "state": {"terminated": {
                    "exitCode": run.exit_code,
                    "reason": "Completed" if run.exit_code == 0 else "Error",
                    "startedAt": run.started_at, "finishedAt": _now()}}}]})
        run.reported_terminal = True
        self._teardown(run)

    def _on_deleting(self, pod, run):
        if run is not None and run.exit_code is None:
            if run.term_deadline is None:
                grace = pod["metadata"].get("deletionGracePeriodSeconds", 30)
                run.term_deadline = time.monotonic() + min(float(grace), MAX_GRACE_S)
                kill_netns_processes(run.netns, signal.SIGTERM)
                return
            if time.monotonic() < run.term_deadline:
                return
            kill_netns_processes(run.netns)
            run.proc.wait(timeout=10)
            self._on_exit(run)
        if run is not None:
            self._teardown(run)
        meta = pod["metadata"]
        try:
            self.api.delete(f"/api/v1/namespaces/{self.ns}/pods/{meta['name']}",
                            {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0,
                             "preconditions": {"uid": meta["uid"]}})
        except ApiError as e:
            if e.status not in (404, 409):
                raise

    def _teardown(self, run):
        if run.proc.poll() is None:
            kill_netns_processes(run.netns)
            run.proc.wait(timeout=10)
            self._on_exit(run)
        self._network.remove_pod(run.uid)
        run.network_up = False

    def _publish_dns(self, pods, services):
        """Every live pod's hosts file gets the headless-Service records of the namespace."""
        headless = {s["metadata"]["name"]: s for s in services
                    if s["spec"].get("clusterIP") == "None"}
        records = []
        for pod in pods:
            run = self.runs.get(pod["metadata"]["uid"])
            if run is None or not run.network_up:
                continue
            svc = headless.get(pod["spec"].get("subdomain", ""))
            if svc is None or not self._selects(svc, pod, run):
                continue
            fqdn = f"{pod['spec'].get('hostname') or pod['metadata']['name']}.{svc['metadata']['name']}.{self.ns}.svc"
            records.append((run.ip, [fqdn + ".cluster.local", fqdn]))
        for uid, run in self.runs.items():
            if run.network_up:
                own = [r for r in records if r[0] == run.ip]
                hostname_line = [(run.ip, own[0][1] + [run.name])] if own else [(run.ip, [run.name])]
                self._network.write_hosts(uid, hostname_line + [r for r in records if r[0] != run.ip])

    @staticmethod
    def _selects(svc, pod, run):
        selector = svc["spec"].get("selector") or {}
        labels = pod["metadata"].get("labels", {})
        if not selector or any(labels.get(k) != v for k, v in selector.items()):
            return False
        # Not-ready (finished) pods are published only with publishNotReadyAddresses.
        return run.exit_code is None or svc["spec"].get("publishNotReadyAddresses", False)

    @staticmethod
    def _conditions(ready):
        t = _now()
        flag = "True" if ready else "False"
        return [{"type": "PodScheduled", "status": "True", "lastTransitionTime": t},
                {"type": "Initialized", "status": "True", "lastTransitionTime": t},
                {"type": "ContainersReady", "status": flag, "lastTransitionTime": t},
                {"type": "Ready", "status": flag, "lastTransitionTime": t}]

    def _patch_status(self, pod, status):
        meta = pod["metadata"]
        try:
            return self.api.merge_patch(f"/api/v1/namespaces/{self.ns}/pods/{meta['name']}/status",
                                        {"metadata": {"uid": meta["uid"]}, "status": status})["status"]
        except ApiError as e:
            if e.status not in (404, 409):  # deleted (or replaced) meanwhile
                raise
            return None
