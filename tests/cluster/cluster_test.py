"""tests/cluster: up.sh brings up a real one-node cluster whose node turns Ready, whose
pods get one address each on the CNI bridge and find each other by the CoreDNS name of
a headless Service, and which reach kube-apiserver through the `kubernetes` Service's
ClusterIP (kube-proxy); down.sh leaves no process, mount, netns, interface or KUBE-*
iptables rule behind."""

import ipaddress
import json
import os
import subprocess
import sys
import tempfile
import time
import unittest

from kueue_checks import KueueChecks

HERE = os.path.dirname(os.path.abspath(__file__))
NS = "dns-check"


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, **kw)


def read_env(path):
    with open(path) as f:
        return dict(line.rstrip("\n").split("=", 1) for line in f if "=" in line)


def images():
    env = run(["bash", "-c", f"source {HERE}/versions.sh; echo $BUSYBOX_IMAGE"], check=True)
    return env.stdout.strip()


def manifests(image):
    pod = lambda name, hostname: {  # noqa: E731
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": NS, "labels": {"app": "ranks"}},
        "spec": {
            "hostname": hostname, "subdomain": "ranks",
            "terminationGracePeriodSeconds": 1,
            "containers": [{
                "name": "main", "image": image, "imagePullPolicy": "IfNotPresent",
                "command": ["sleep", "3600"],
            }],
        },
    }
    service = {
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "ranks", "namespace": NS},
        "spec": {"clusterIP": "None", "selector": {"app": "ranks"},
                 "ports": [{"name": "rendezvous", "port": 29500}]},
    }
    return {"apiVersion": "v1", "kind": "List",
            "items": [service, pod("rank-0", "rank0"), pod("rank-1", "rank1")]}


def links(*args):
    return {line.split(":")[1].strip().split("@")[0]
            for line in run(["ip", "-o", "link", "show", *args]).stdout.splitlines()}


def mounts():
    with open("/proc/self/mountinfo") as f:
        return [line.split()[4] for line in f]


def cluster_processes(directory, rundir):
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if int(pid) != os.getpid() and (f" {directory}/" in cmd or f" {rundir}/" in cmd):
            found.append(f"{pid}: {cmd[:120]}")
    return found


class ClusterTest(KueueChecks, unittest.TestCase):
    def kubectl(self, *args, check=True, stdin=None):
        res = run(["kubectl", "--kubeconfig", self.kubeconfig, *args], input=stdin,
                  env=dict(os.environ, KUBECACHEDIR=os.path.join(self.dir, "kube-cache")))
        if check and res.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed:\n{res.stderr}")
        return res

    def wait(self, what, seconds, probe):
        deadline = time.monotonic() + seconds
        last = None
        while time.monotonic() < deadline:
            ok, last = probe()
            if ok:
                return last
            time.sleep(0.5)
        self.fail(f"{what} not reached after {seconds}s; last: {last}")

    def test_up_ready_dns_down(self):
        tmp = tempfile.TemporaryDirectory(prefix="ddp3d-cluster-")
        self.addCleanup(tmp.cleanup)
        self.dir = os.path.join(tmp.name, "c")
        t0 = time.monotonic()
        up = run(["bash", os.path.join(HERE, "up.sh"), self.dir],
                 env=dict(os.environ, CLUSTER_OWNER_PID=str(os.getpid())))
        # down.sh runs whatever happens, and is itself under test below.
        downed = []
        self.addCleanup(lambda: downed or run(["bash", os.path.join(HERE, "down.sh"), self.dir]))
        self.assertEqual(up.returncode, 0, f"up.sh failed:\n{up.stderr[-4000:]}")
        print(f"\nup.sh: {time.monotonic() - t0:.1f}s", file=sys.stderr)
        self.kubeconfig = up.stdout.strip().splitlines()[-1]
        self.assertEqual(self.kubeconfig, os.path.join(self.dir, "kubeconfig"))
        env = read_env(os.path.join(self.dir, "cluster.env"))
        subnet = ipaddress.ip_network(env["POD_SUBNET"])

        # The node is Ready, on the real container runtime.
        node = json.loads(self.kubectl("get", "node", env["NODE_NAME"], "-o", "json").stdout)
        ready = {c["type"]: c["status"] for c in node["status"]["conditions"]}["Ready"]
        self.assertEqual(ready, "True")
        self.assertTrue(node["status"]["nodeInfo"]["containerRuntimeVersion"].startswith("containerd://2."))

        # Two pods behind a headless Service: one address each, both on the bridge.
        self.kubectl("create", "namespace", NS)
        self.wait("ServiceAccount dns-check/default", 60, lambda: (
            self.kubectl("-n", NS, "get", "sa", "default", check=False).returncode == 0, None))
        self.kubectl("apply", "-f", "-", stdin=json.dumps(manifests(images())))
        t1 = time.monotonic()

        def running():
            pods = json.loads(self.kubectl("-n", NS, "get", "pods", "-o", "json").stdout)["items"]
            phases = {p["metadata"]["name"]: p["status"].get("phase") for p in pods}
            ok = len(pods) == 2 and all(v == "Running" for v in phases.values())
            return ok, (phases if not ok else {p["metadata"]["name"]: p["status"]["podIP"] for p in pods})
        ips = self.wait("both pods Running", 120, running)
        print(f"pods Running {time.monotonic() - t1:.1f}s after apply: {ips}", file=sys.stderr)
        self.assertNotEqual(ips["rank-0"], ips["rank-1"])
        for ip in ips.values():
            self.assertIn(ipaddress.ip_address(ip), subnet)

        # rank-1 resolves rank-0's hostname.subdomain name through CoreDNS, from inside
        # its own network namespace, and gets rank-0's pod address.
        name = f"rank0.ranks.{NS}.svc.cluster.local"

        def resolved():
            res = self.kubectl("-n", NS, "exec", "rank-1", "--", "nslookup", name, check=False)
            answer = res.stdout.split("Name:", 1)[-1] if "Name:" in res.stdout else ""
            return ips["rank-0"] in answer, (res.returncode, res.stdout[-300:], res.stderr[-300:])
        self.wait(f"{name} resolving to {ips['rank-0']}", 60, resolved)
        resolv = self.kubectl("-n", NS, "exec", "rank-1", "--", "cat", "/etc/resolv.conf").stdout
        self.assertIn(f"nameserver {env['CLUSTER_DNS']}", resolv)
        self.assertIn(f"search {NS}.svc.cluster.local svc.cluster.local cluster.local", resolv)

        # kube-proxy: the `kubernetes` Service's ClusterIP leads to kube-apiserver, as an
        # in-cluster client such as the operator dials it. busybox has no TLS client that
        # talks ECDSA, so the pod sends plain HTTP to the TLS port: Go's TLS server answers
        # that with its own 400, which only kube-apiserver on the far end can have written.
        cluster_ip = self.kubectl("-n", "default", "get", "service", "kubernetes",
                                  "-o", "jsonpath={.spec.clusterIP}").stdout.strip()
        probe = f"printf 'GET /version HTTP/1.0\\r\\n\\r\\n' | nc -w 5 {cluster_ip} 443"

        def api_via_service():
            res = self.kubectl("-n", NS, "exec", "rank-1", "--", "sh", "-c", probe, check=False)
            return ("Client sent an HTTP request to an HTTPS server" in res.stdout,
                    (res.returncode, res.stdout[-300:], res.stderr[-300:]))
        self.wait(f"kube-apiserver through ClusterIP {cluster_ip}:443", 60, api_via_service)

        # The pods' network: a netns each (nsfs mounts under the run dir), a host veth
        # each on the bridge. Other tests may make netns and links meanwhile, so only
        # the cluster's own are checked.
        pod_netns = [m for m in mounts() if m.startswith(env["RUN"] + "/")]
        veths = links("master", env["BRIDGE"])
        self.assertGreaterEqual(len(veths), 2, veths)
        self.assertGreaterEqual(len(pod_netns), 2, pod_netns)

        # Kueue (kueue.sh) on this cluster: webhooks, admission, quota (kueue_checks.py).
        self.check_kueue()

        # down.sh: no process, mount, netns or interface of the cluster remains.
        down = run(["bash", os.path.join(HERE, "down.sh"), self.dir])
        downed.append(True)
        self.assertEqual(down.returncode, 0, f"down.sh failed:\n{down.stderr[-4000:]}")
        left = links()
        self.assertEqual(veths & left, set(), "pod veths remain")
        self.assertNotIn(env["BRIDGE"], left)
        self.assertEqual([m for m in mounts()
                          if m.startswith(self.dir + "/") or m.startswith(env["RUN"])], [])
        self.assertEqual(cluster_processes(self.dir, env["RUN"]), [], "processes remain")
        self.assertFalse(os.path.exists("/etc/kueue/metrics/certs/ddp3d-cluster.dir"),
                         "kueue.sh's metrics certificate remains")
        # kube-proxy's and the kubelet's KUBE-* chains, and the jumps to them, are gone.
        rules = [r for save in ("iptables-save", "ip6tables-save")
                 for r in run([save]).stdout.splitlines()
                 if r.startswith(("-A KUBE-", ":KUBE-")) or " -j KUBE-" in r]
        self.assertEqual(rules, [], "KUBE-* iptables rules remain")


if __name__ == "__main__":
    unittest.main()
