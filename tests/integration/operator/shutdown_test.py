"""SIGTERM stops the operator within seconds whatever hangs: the leader, run against a real
kube-apiserver as the chart's ServiceAccount, gets SIGTERM while an API call waits on an exec
credential plugin that hangs, or while the API server has gone silent (a proxy that accepts
and never answers). The graceful stop gets --shutdown-grace-seconds (default 3 s), the Lease
release 1 s more; then requests in flight are failed and the plugin's process group is
killed. It must exit 0, every thread joined, within 5 s, and log why it cut the stop short.
"""

import os
import re
import signal
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (NS, SYSTEM_NS, Cluster, Kube, Operator,  # noqa: E402
                     OperatorLogOnFailure, StallingProxy, training_job, wait_for)

STOP_WITHIN = 5.0  # seconds from SIGTERM to exit; the chart's terminationGracePeriodSeconds is 30

# Prints the ServiceAccount token with an expiry 5 s ahead (inside the 10 s refresh margin,
# so the operator runs it for every request), until the file `hang` appears: from then on it
# records its pid and sleeps, as a plugin waiting on an SSO prompt or a dead token service.
PLUGIN = """#!/bin/sh
dir='{dir}'
if [ -e "$dir/hang" ]; then
  echo $$ >> "$dir/hung"
  exec sleep 600
fi
exp=$(date -u -d "@$(( $(date +%s) + 5 ))" +%Y-%m-%dT%H:%M:%SZ)
printf '{{"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential", '
printf '"status": {{"token": "%s", "expirationTimestamp": "%s"}}}}' "$(cat "$dir/token")" "$exp"
"""


def running(pid):
    """Whether `pid` is a live process (a zombie counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


class ShutdownTest(OperatorLogOnFailure, unittest.TestCase):
    op = None

    @classmethod
    def setUpClass(cls):
        cls.cluster = Cluster().start()
        cls.kube = cls.cluster.kube

    @classmethod
    def tearDownClass(cls):
        cls.cluster.stop()

    def tearDown(self):
        if self.op:
            self.op.stop()

    def lease_holder(self):
        lease = self.kube.get(f"/apis/coordination.k8s.io/v1/namespaces/{SYSTEM_NS}"
                              "/leases/ddp3d-operator")
        return lease and lease["spec"].get("holderIdentity")

    def start_leader(self, name, kubeconfig):
        self.op = Operator(self.cluster, name, kubeconfig=kubeconfig)
        wait_for(lambda: self.lease_holder() == name, 40, f"{name} to lead")
        wait_for(self.op.ready, 30, f"{name} ready")
        return self.op

    def sigterm(self):
        """SIGTERM; returns (exit code, seconds it took) and checks the clean exit."""
        t0 = time.monotonic()
        self.op.proc.send_signal(signal.SIGTERM)
        code = self.op.proc.wait(timeout=60)
        took = time.monotonic() - t0
        sys.stderr.write(f"\n{self.op.name} exited {code} {took:.2f} s after SIGTERM\n")
        logs = self.op.logs()
        before = re.search(r"(\d+) threads before starting", logs).group(1)
        self.assertIn(f"stopped; every thread joined ({before} left", logs)
        return code, took

    def test_sigterm_while_an_exec_credential_plugin_hangs(self):
        tmp = os.path.join(self.cluster.tmp, "exec")
        os.makedirs(tmp)
        with open(self.cluster.sa_kubeconfig) as f:
            text = f.read()
        token = re.search(r"^\s+token: (\S+)$", text, re.M).group(1)
        with open(os.path.join(tmp, "token"), "w") as f:
            f.write(token)
        plugin = os.path.join(tmp, "get-token.sh")
        with open(plugin, "w") as f:
            f.write(PLUGIN.format(dir=tmp))
        os.chmod(plugin, 0o755)
        text, n = re.subn(r"^(\s+)token: \S+$",
                          r"\1exec:\n\1  apiVersion: client.authentication.k8s.io/v1\n"
                          rf"\1  command: {plugin}\n\1  interactiveMode: Never",
                          text, flags=re.M)
        self.assertEqual(n, 1)
        kubeconfig = os.path.join(tmp, "exec.kubeconfig")
        with open(kubeconfig, "w") as f:
            f.write(text)

        op = self.start_leader("op-exec", kubeconfig)
        # The job watch must be open before the plugin hangs, or the new job never reaches a
        # worker (the watch itself would be what waits on the plugin).
        wait_for(lambda: re.search(r"watch /apis/ddp3d\.io/v1alpha1/trainingjobs\?\S*: stream open",
                                   op.logs()), 10, "the TrainingJob watch open")
        # From now on the plugin hangs; a new job makes a worker ask it for a token.
        open(os.path.join(tmp, "hang"), "w").close()
        self.kube.create(Kube.tj(NS), training_job("hang-1", nnodes=2))
        hung = os.path.join(tmp, "hung")
        wait_for(lambda: os.path.exists(hung) and open(hung).read().split(), 10,
                 "a request to wait on the hung plugin")
        time.sleep(0.5)  # the worker's request among them (the elector renews every 2 s)
        self.assertIsNone(op.proc.poll())

        code, took = self.sigterm()
        self.assertEqual(code, 0)
        self.assertLess(took, STOP_WITHIN)
        logs = op.logs()
        self.assertIn("still stopping the workers 3 s after the shutdown began", logs)
        self.assertIn("cutting the drain short", logs)
        self.assertIn("was stopped, the client was shut off; its process group was killed", logs)
        for pid in open(hung).read().split():
            self.assertFalse(running(int(pid)), f"plugin {pid} outlived the operator")

    def test_sigterm_while_the_api_server_is_silent(self):
        api_port = int(re.search(r"127\.0\.0\.1:(\d+)", self.kube.base).group(1))
        proxy = StallingProxy(api_port)
        self.addCleanup(proxy.close)
        proxied = proxy.kubeconfig(self.cluster.sa_kubeconfig,
                                   os.path.join(self.cluster.tmp, "proxied.kubeconfig"))
        op = self.start_leader("op-silent", proxied)
        # Wait for a renewal to have gone through, so the Lease is far from its deadline.
        wait_for(lambda: op.metric("ddp3d_operator_is_leader") == 1, 10, "leader gauge")
        proxy.stall()
        time.sleep(2.5)  # a renewal (every 2 s) is now waiting on the silent server
        self.assertIsNone(op.proc.poll())

        code, took = self.sigterm()
        self.assertEqual(code, 0)
        self.assertLess(took, STOP_WITHIN)
        logs = op.logs()
        # The Lease release cannot reach the server: it is cut 1 s after the grace.
        self.assertIn("cutting the leader election short", logs)
        self.assertIn("could not release the lease", logs)
        self.assertEqual(self.lease_holder(), "op-silent", "the Lease expires by itself")


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1] + sys.argv[1:], verbosity=2)
