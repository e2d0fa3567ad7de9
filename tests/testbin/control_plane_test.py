"""control-plane.sh: start/stop, API-server restart, ServiceAccount kubeconfigs, RBAC,
concurrent instances and the owner watchdog, against the real binaries."""

import json
import os
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from controlplane import SCRIPT, ControlPlane  # noqa: E402


def alive(pid):
    """True while pid runs (a zombie awaiting a reaper counts as exited)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def wait_dead(pids, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(alive(p) for p in pids):
        time.sleep(0.2)
    return not any(alive(p) for p in pids)


class ControlPlaneTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="ddp3d-cp-")
        cls.cp = ControlPlane(os.path.join(cls.tmp.name, "a")).start()
        print(f"\ncontrol plane started in {cls.cp.start_seconds:.1f}s", file=sys.stderr)

    @classmethod
    def tearDownClass(cls):
        try:
            pids = cls.cp.pids()
            cls.cp.stop()
            assert not any(alive(p) for p in pids), "stop left a process behind"
        finally:
            cls.tmp.cleanup()

    def test_admin_kubeconfig_verifies_tls_and_is_cluster_admin(self):
        with open(self.cp.kubeconfig) as f:
            text = f.read()
        self.assertIn("certificate-authority-data", text)
        self.assertNotIn("insecure-skip-tls-verify", text)
        self.assertTrue(self.cp.env["APISERVER_URL"].startswith("https://127.0.0.1:"))
        res = self.cp.kubectl("auth", "can-i", "*", "*", "--all-namespaces")
        self.assertEqual(res.stdout.strip(), "yes")
        res = self.cp.kubectl("get", "--raw", "/readyz")
        self.assertEqual(res.stdout.strip(), "ok")
        res = self.cp.kubectl("version", "-o", "json", check=True)
        self.assertEqual(json.loads(res.stdout)["serverVersion"]["gitVersion"], "v1.36.3")

    def test_build_is_cached_by_version(self):
        t0 = time.monotonic()
        res = subprocess.run(["bash", os.path.join(os.path.dirname(SCRIPT), "build.sh")],
                             capture_output=True, text=True)
        self.assertEqual(res.returncode, 0, res.stderr)
        self.assertEqual(res.stdout.strip(), self.cp.env["TESTBIN"])
        self.assertTrue(self.cp.env["TESTBIN"].endswith("/testbin/v1.36.3"))
        self.assertIn("kube-apiserver up to date", res.stderr)
        self.assertIn("etcd up to date", res.stderr)
        self.assertLess(time.monotonic() - t0, 10)

    def test_service_account_kubeconfig_is_subject_to_rbac(self):
        cp = self.cp
        cp.script("create-namespace", "rbac-ns")
        cp.kubectl("-n", "rbac-ns", "create", "serviceaccount", "bot", check=True)
        out = os.path.join(cp.dir, "bot.kubeconfig")
        self.assertEqual(cp.script("sa-kubeconfig", "rbac-ns", "bot", out), out)
        denied = cp.kubectl("get", "pods", kubeconfig=out)
        self.assertNotEqual(denied.returncode, 0)
        self.assertIn('User "system:serviceaccount:rbac-ns:bot" cannot list resource "pods"',
                      denied.stderr)
        cp.kubectl("-n", "rbac-ns", "create", "role", "pod-reader", "--verb=get,list",
                   "--resource=pods", check=True)
        cp.kubectl("-n", "rbac-ns", "create", "rolebinding", "bot-reads",
                   "--role=pod-reader", "--serviceaccount=rbac-ns:bot", check=True)
        allowed = cp.kubectl("get", "pods", kubeconfig=out)
        self.assertEqual(allowed.returncode, 0, allowed.stderr)
        self.assertNotEqual(cp.kubectl("get", "secrets", kubeconfig=out).returncode, 0)

    def test_pods_can_be_created_in_created_namespace(self):
        # ServiceAccount admission is on; create-namespace provides "default".
        cp = self.cp
        cp.script("create-namespace", "pods-ns")
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
               "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
        res = cp.kubectl("-n", "pods-ns", "create", "-f", "-", stdin=json.dumps(pod))
        self.assertEqual(res.returncode, 0, res.stderr)

    def test_apiserver_restart_keeps_port_and_data(self):
        cp = self.cp
        cp.kubectl("create", "configmap", "survivor", "--from-literal=k=v", check=True)
        url, old_pid = cp.env["APISERVER_URL"], int(cp.env["APISERVER_PID"])
        cp.script("stop-apiserver")
        self.assertFalse(alive(old_pid))
        self.assertNotEqual(cp.kubectl("get", "--raw", "/readyz").returncode, 0)
        t0 = time.monotonic()
        cp.script("start-apiserver")
        print(f"kube-apiserver restarted in {time.monotonic() - t0:.1f}s", file=sys.stderr)
        self.assertEqual(cp.env["APISERVER_URL"], url)
        self.assertNotEqual(int(cp.env["APISERVER_PID"]), old_pid)
        res = cp.kubectl("get", "configmap", "survivor", "-o", "jsonpath={.data.k}", check=True)
        self.assertEqual(res.stdout, "v")

    def test_second_instance_is_isolated_and_watchdog_stops_it_when_owner_dies(self):
        directory = os.path.join(self.tmp.name, "b")
        owner = subprocess.Popen(["sleep", "600"])
        pids = []
        try:
            env = dict(os.environ, CONTROL_PLANE_OWNER_PID=str(owner.pid))
            res = subprocess.run(["bash", SCRIPT, "start", directory], env=env,
                                 capture_output=True, text=True)
            self.assertEqual(res.returncode, 0, res.stderr)
            other = ControlPlane(directory)
            other._load_env()
            pids = [int(other.env[k]) for k in ("ETCD_PID", "APISERVER_PID", "WATCHDOG_PID")]
            self.assertTrue(all(alive(p) for p in pids))
            # Concurrent control planes: own ports, own data.
            self.assertNotEqual(other.env["APISERVER_PORT"], self.cp.env["APISERVER_PORT"])
            self.assertNotEqual(other.env["ETCD_PORT"], self.cp.env["ETCD_PORT"])
            other.kubectl("create", "namespace", "only-in-b", check=True)
            self.assertIn("NotFound", self.cp.kubectl("get", "namespace", "only-in-b").stderr)
        finally:
            owner.kill()
            owner.wait()
        self.assertTrue(wait_dead(pids, 30), "watchdog did not stop the orphaned control plane")
        self.assertFalse(os.path.exists(os.path.join(directory, "env")))

if __name__ == "__main__":
    unittest.main(verbosity=2)
