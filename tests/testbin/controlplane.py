"""Python handle on tests/testbin/control-plane.sh for integration tests.

    with ControlPlane(tmpdir) as cp:
        cp.kubectl("apply", "-f", "crds/")

The control plane is stopped on exit, and a watchdog started with it stops it if
this process dies first, so a crashed test leaks no servers.
"""

import os
import subprocess
import time

TESTBIN = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(TESTBIN, "control-plane.sh")


def _run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, **kw)


class ControlPlane:
    def __init__(self, directory, extra_env=None):
        """`extra_env`: variables for control-plane.sh start, e.g. APISERVER_FEATURE_GATES."""
        self.dir = os.path.abspath(directory)
        self.env = {}
        self.extra_env = dict(extra_env or {})
        self.start_seconds = None

    # -- lifecycle -----------------------------------------------------------
    def start(self):
        child_env = dict(os.environ, CONTROL_PLANE_OWNER_PID=str(os.getpid()), **self.extra_env)
        t0 = time.monotonic()
        res = _run(["bash", SCRIPT, "start", self.dir], env=child_env)
        self.start_seconds = time.monotonic() - t0
        if res.returncode != 0:
            raise RuntimeError(f"control-plane.sh start failed:\n{res.stderr}")
        self._load_env()
        return self

    def stop(self):
        if os.path.exists(os.path.join(self.dir, "env")):
            res = _run(["bash", SCRIPT, "stop", self.dir])
            if res.returncode != 0:
                raise RuntimeError(f"control-plane.sh stop failed:\n{res.stderr}")

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def _load_env(self):
        with open(os.path.join(self.dir, "env")) as f:
            self.env = dict(line.rstrip("\n").split("=", 1) for line in f if "=" in line)

    # -- helpers -------------------------------------------------------------
    @property
    def kubeconfig(self):
        return self.env["KUBECONFIG"]

    def kubectl(self, *args, stdin=None, kubeconfig=None, check=False):
        """Runs kubectl against this control plane; returns the CompletedProcess."""
        env = dict(os.environ, KUBECACHEDIR=os.path.join(self.dir, "kube-cache"))
        res = _run(["kubectl", "--kubeconfig", kubeconfig or self.kubeconfig, *args],
                   input=stdin, env=env)
        if check and res.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed:\n{res.stderr}")
        return res

    def wait_established(self, crd, seconds=60):
        """Waits until CRD `crd` (e.g. "trainingjobs.ddp3d.io") is Established. Not `kubectl wait
        --for=condition=Established`: that fails at once ("accessor error") when it reads the
        CRD before the API server has written any condition."""
        deadline = time.monotonic() + seconds
        jsonpath = '{.status.conditions[?(@.type=="Established")].status}'
        while True:
            res = self.kubectl("get", "crd", crd, "-o", f"jsonpath={jsonpath}")
            if res.returncode == 0 and res.stdout.strip() == "True":
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"CRD {crd} not Established after {seconds}s: "
                                     f"{res.stdout}{res.stderr}")
            time.sleep(0.2)

    def script(self, *args):
        """Runs another control-plane.sh subcommand on this directory."""
        res = _run(["bash", SCRIPT, args[0], self.dir, *args[1:]])
        if res.returncode != 0:
            raise RuntimeError(f"control-plane.sh {args[0]} failed:\n{res.stderr}")
        if os.path.exists(os.path.join(self.dir, "env")):
            self._load_env()
        return res.stdout.strip()

    def pids(self):
        return [int(self.env[k]) for k in ("ETCD_PID", "APISERVER_PID") if self.env.get(k)]
