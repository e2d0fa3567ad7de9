"""tests/cluster with three nodes: up.sh --nodes 3 starts three kubelet nodes, each with its
own containerd, bridge and pod subnet, whose pods reach each other, a ClusterIP Service
and CoreDNS across nodes; node.sh poweroff kills a node as a power loss would (its
processes gone, its pods' addresses unreachable, the node lifecycle controller turns it
Ready=Unknown), poweron brings it back Ready without the pods deleted meanwhile and with
its extended resources; drain evicts; bad input fails clearly; a cluster killed with its
owner is taken down by the next up.sh; down.sh leaves nothing."""

import ipaddress
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import unittest

from cluster_test import cluster_processes, images, links, mounts, read_env, run

HERE = os.path.dirname(os.path.abspath(__file__))
UP = os.path.join(HERE, "up.sh")
DOWN = os.path.join(HERE, "down.sh")
NODE = os.path.join(HERE, "node.sh")
NS = "multinode"
GPU = "example.com/gpu"
PORT = 8080


def web_pod(name, node, image, labels=None):
    """busybox httpd on PORT answering `hello from NODE`, pinned to NODE."""
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": NS, "labels": {"app": "web", **(labels or {})}},
        "spec": {
            "nodeName": node, "terminationGracePeriodSeconds": 1,
            "containers": [{
                "name": "main", "image": image, "imagePullPolicy": "IfNotPresent",
                "command": ["sh", "-c", f"mkdir -p /www && echo hello from {node} >/www/index.html"
                            f" && exec httpd -f -p {PORT} -h /www"],
            }],
        },
    }


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def cgroup_pids(root):
    """Processes in the pids-hierarchy cgroup ROOT and below."""
    base = os.path.join("/sys/fs/cgroup/pids", root.lstrip("/"))
    found = set()
    for d, _, _ in os.walk(base):
        try:
            with open(os.path.join(d, "cgroup.procs")) as f:
                found.update(int(p) for p in f.read().split())
        except OSError:
            pass
    return found


def cmdline_pids(fragment):
    found = set()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if fragment in cmd and int(pid) != os.getpid():
            found.add(int(pid))
    return found


class MultiNodeTest(unittest.TestCase):
    def kubectl(self, *args, check=True, stdin=None):
        res = run(["kubectl", "--kubeconfig", self.kubeconfig, *args], input=stdin,
                  env=dict(os.environ, KUBECACHEDIR=os.path.join(self.dir, "kube-cache")))
        if check and res.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed:\n{res.stderr}")
        return res

    def node_sh(self, *args):
        return run(["bash", NODE, self.dir, *args])

    def wait(self, what, seconds, probe):
        deadline = time.monotonic() + seconds
        last = None
        while time.monotonic() < deadline:
            ok, last = probe()
            if ok:
                return last
            time.sleep(0.5)
        self.fail(f"{what} not reached after {seconds}s; last: {last}")

    def node(self, name):
        return json.loads(self.kubectl("get", "node", name, "-o", "json").stdout)

    def ready(self, name):
        conds = {c["type"]: c["status"] for c in self.node(name)["status"].get("conditions", [])}
        return conds.get("Ready")

    def pods(self):
        items = json.loads(self.kubectl("-n", NS, "get", "pods", "-o", "json").stdout)["items"]
        return {p["metadata"]["name"]: p for p in items}

    def wait_running(self, names, seconds=120):
        def probe():
            pods = self.pods()
            phases = {n: pods[n]["status"].get("phase") if n in pods else None for n in names}
            ok = all(v == "Running" and pods[n]["status"].get("podIP") for n, v in phases.items())
            return ok, phases if not ok else {n: pods[n]["status"]["podIP"] for n in names}
        return self.wait(f"pods {names} Running", seconds, probe)

    def fetch(self, pod, url, timeout=5):
        """wget from inside POD: (returncode, output, seconds)."""
        t0 = time.monotonic()
        # busybox timeout, not wget -T (Debian's static busybox 1.35 wget segfaults with -T).
        res = self.kubectl("-n", NS, "exec", pod, "--", "timeout", str(timeout),
                           "wget", "-q", "-O", "-", url, check=False)
        return res.returncode, (res.stdout + res.stderr).strip(), time.monotonic() - t0

    def assert_fetch(self, pod, url, expect):
        def probe():
            rc, out, _ = self.fetch(pod, url)
            return rc == 0 and out == expect, (rc, out[-300:])
        self.wait(f"{pod} fetching {url}", 60, probe)

    def test_three_nodes(self):
        tmp = tempfile.TemporaryDirectory(prefix="ddp3d-multinode-")
        self.addCleanup(tmp.cleanup)
        self.dir = os.path.join(tmp.name, "c")

        # Bad node counts fail before anything starts: no DIR, no bridge.
        for bad in ("0", "abc", "99"):
            res = run(["bash", UP, self.dir, "--nodes", bad])
            self.assertNotEqual(res.returncode, 0, f"--nodes {bad} accepted")
            self.assertIn(f"--nodes {bad}", res.stderr)
            self.assertFalse(os.path.exists(self.dir), f"--nodes {bad} made {self.dir}")
            self.assertFalse(any(re.fullmatch(r"ddp3d\d+", l) for l in links()), f"--nodes {bad}: bridge made")
        with open("/proc/sys/net/ipv4/ip_forward") as f:
            forward_before = f.read().strip()

        t0 = time.monotonic()
        up = run(["bash", UP, self.dir, "--nodes", "3", "--capacity", f"{GPU}=2"],
                 env=dict(os.environ, CLUSTER_OWNER_PID=str(os.getpid())))
        downed = []
        self.addCleanup(lambda: downed or run(["bash", DOWN, self.dir]))
        self.assertEqual(up.returncode, 0, f"up.sh --nodes 3 failed:\n{up.stderr[-4000:]}")
        print(f"\nup.sh --nodes 3: {time.monotonic() - t0:.1f}s", file=sys.stderr)
        self.kubeconfig = up.stdout.strip().splitlines()[-1]
        env = read_env(os.path.join(self.dir, "cluster.env"))
        names = env["NODES"].split(",")
        self.assertEqual(names, ["ddp3d-node-0", "ddp3d-node-1", "ddp3d-node-2"])
        self.assertEqual(env["NODE_COUNT"], "3")
        grace = int(env["NODE_MONITOR_GRACE_PERIOD"].rstrip("s"))
        subnet = [ipaddress.ip_network(env[f"NODE_{i}_SUBNET"]) for i in range(3)]
        self.assertEqual(len(set(subnet)), 3)

        # Three Ready nodes on containerd 2, each addressed on its own bridge, each
        # advertising the extended resource given to up.sh.
        listed = json.loads(self.kubectl("get", "nodes", "-o", "json").stdout)["items"]
        self.assertEqual(sorted(n["metadata"]["name"] for n in listed), names)
        for i, name in enumerate(names):
            node = self.node(name)
            self.assertEqual(self.ready(name), "True", name)
            self.assertTrue(node["status"]["nodeInfo"]["containerRuntimeVersion"].startswith("containerd://2."))
            addrs = {a["type"]: a["address"] for a in node["status"]["addresses"]}
            self.assertEqual(addrs["InternalIP"], env[f"NODE_{i}_IP"])
            self.assertEqual(node["status"]["allocatable"].get(GPU), "2", name)
        # Distinct containerds and kubelets.
        self.assertEqual(len({env[f"NODE_{i}_CONTAINERD_PID"] for i in range(3)}), 3)
        self.assertEqual(len({env[f"NODE_{i}_KUBELET_PID"] for i in range(3)}), 3)

        # One web server pinned to each node: its address lies in its node's subnet.
        image = images()
        self.kubectl("create", "namespace", NS)
        self.wait("ServiceAccount default", 60, lambda: (
            self.kubectl("-n", NS, "get", "sa", "default", check=False).returncode == 0, None))
        web = {i: f"web-{i}" for i in range(3)}
        items = [web_pod(web[i], names[i], image, {"node": str(i)}) for i in range(3)]
        service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web2", "namespace": NS},
                   "spec": {"selector": {"app": "web", "node": "2"}, "ports": [{"port": PORT}]}}
        self.kubectl("apply", "-f", "-", stdin=json.dumps({"apiVersion": "v1", "kind": "List",
                                                          "items": items + [service]}))
        t1 = time.monotonic()
        ips = self.wait_running(list(web.values()))
        print(f"3 pinned pods Running {time.monotonic() - t1:.1f}s after apply: {ips}", file=sys.stderr)
        pods = self.pods()
        for i in range(3):
            self.assertEqual(pods[web[i]]["spec"]["nodeName"], names[i])
            self.assertIn(ipaddress.ip_address(ips[web[i]]), subnet[i], web[i])

        # Every pod reaches every other across nodes, by pod IP.
        for i in range(3):
            for j in range(3):
                if i != j:
                    self.assert_fetch(web[i], f"http://{ips[web[j]]}:{PORT}/", f"hello from {names[j]}")
        # A ClusterIP Service (kube-proxy) by its DNS name (CoreDNS), from other nodes.
        cluster_ip = self.kubectl("-n", NS, "get", "service", "web2",
                                  "-o", "jsonpath={.spec.clusterIP}").stdout.strip()
        self.assert_fetch(web[0], f"http://web2.{NS}.svc.cluster.local:{PORT}/", f"hello from {names[2]}")
        self.assert_fetch(web[1], f"http://{cluster_ip}:{PORT}/", f"hello from {names[2]}")
        res = self.kubectl("-n", NS, "exec", web[1], "--", "nslookup", f"web2.{NS}.svc.cluster.local")
        self.assertIn(cluster_ip, res.stdout.split("Name:", 1)[-1])

        # Power loss of node 2: kubelet, containerd, shims and container processes gone.
        victims = {"kubelet": {int(env["NODE_2_KUBELET_PID"])},
                   "containerd": {int(env["NODE_2_CONTAINERD_PID"])},
                   "shims": {p for p in cmdline_pids(env["NODE_2_RUN"] + "/") if
                             "containerd-shim" in open(f"/proc/{p}/cmdline").read()},
                   "containers": cgroup_pids(env["NODE_2_CGROUP_ROOT"])}
        self.assertTrue(victims["shims"], "no shim of node 2 found")
        self.assertTrue(victims["containers"], "no container process of node 2 found")
        others = {int(env[f"NODE_{i}_{k}_PID"]) for i in (0, 1) for k in ("KUBELET", "CONTAINERD")}
        t_off = time.monotonic()
        res = self.node_sh("poweroff", names[2])
        self.assertEqual(res.returncode, 0, res.stderr)
        print(f"poweroff: {time.monotonic() - t_off:.1f}s ({res.stderr.strip()})", file=sys.stderr)
        for what, pids in victims.items():
            self.assertEqual({p for p in pids if alive(p)}, set(), f"node 2's {what} survive poweroff")
        self.assertTrue(all(alive(p) for p in others), "poweroff of node 2 hit node 0 or 1")
        self.assertEqual(cmdline_pids(env["NODE_2_RUN"] + "/"), set())
        self.assertEqual([m for m in mounts() if m.startswith(env["NODE_2_RUN"] + "/")], [])
        self.assertEqual(links("master", env["NODE_2_BRIDGE"]), set(), "node 2's veths remain")
        self.assertEqual(run(["ip", "-4", "route", "show", env["NODE_2_SUBNET"]]).stdout.strip(), "")
        # Its pod's address times out from node 0 (blackhole, not a refusal); node 1's answers.
        rc, out, took = self.fetch(web[0], f"http://{ips[web[2]]}:{PORT}/", timeout=3)
        self.assertNotEqual(rc, 0, out)
        self.assertGreaterEqual(took, 2.8, f"not a timeout: {out}")
        print(f"fetch of powered-off pod {ips[web[2]]}: rc {rc} after {took:.1f}s: {out}", file=sys.stderr)
        self.assert_fetch(web[0], f"http://{ips[web[1]]}:{PORT}/", f"hello from {names[1]}")
        # The node lifecycle controller notices within the grace period (+ its 2 s period).
        self.wait(f"{names[2]} Ready=Unknown", grace + 40, lambda: (self.ready(names[2]) == "Unknown",
                                                                      self.ready(names[2])))
        print(f"poweroff -> Ready=Unknown: {time.monotonic() - t_off:.1f}s (grace {grace}s)", file=sys.stderr)
        self.assertEqual(self.ready(names[1]), "True")

        # Hostile and repeated requests: clear messages, nothing changed.
        res = self.node_sh("poweroff", names[2])
        self.assertEqual(res.returncode, 0, res.stderr)
        self.assertIn("already powered off", res.stderr)
        res = self.node_sh("poweron", names[1])
        self.assertEqual(res.returncode, 0, res.stderr)
        self.assertIn("already powered on", res.stderr)
        self.assertEqual(read_env(os.path.join(self.dir, "cluster.env"))["NODE_1_KUBELET_PID"],
                         env["NODE_1_KUBELET_PID"])
        res = self.node_sh("poweroff", names[0])
        self.assertNotEqual(res.returncode, 0)
        self.assertIn("control-plane node", res.stderr)
        for cmd in ("poweroff", "poweron", "drain", "capacity"):
            res = self.node_sh(cmd, "no-such-node", *([f"{GPU}=1"] if cmd == "capacity" else []))
            self.assertNotEqual(res.returncode, 0, cmd)
            self.assertIn("no-such-node", res.stderr)
            self.assertIn(names[1], res.stderr, "the message names the nodes that exist")
        res = self.node_sh("capacity", names[1], "cpu=4")
        self.assertNotEqual(res.returncode, 0)
        self.assertIn("extended resource", res.stderr)

        # Meanwhile its pod is deleted (as a controller replacing it would); power on:
        # Ready again, the deleted pod does not run there, the capacity is back, and a
        # new pod there is reachable from another node.
        self.kubectl("-n", NS, "delete", "pod", web[2], "--force", "--grace-period=0")
        t_on = time.monotonic()
        res = self.node_sh("poweron", names[2])
        self.assertEqual(res.returncode, 0, res.stderr)
        print(f"poweron -> Ready: {time.monotonic() - t_on:.1f}s ({res.stderr.strip()})", file=sys.stderr)
        self.assertEqual(self.ready(names[2]), "True")
        self.assertEqual(self.node(names[2])["status"]["allocatable"].get(GPU), "2")
        env = read_env(os.path.join(self.dir, "cluster.env"))
        ctr = [os.path.join(env["CACHE"], "bin", "ctr"), "--address", env["NODE_2_CONTAINERD_SOCK"],
               "--namespace", "k8s.io"]
        # The kubelet stops the old sandbox (CNI DEL releases its address); nothing runs.
        self.wait("no task on node 2", 60, lambda: (
            run(ctr + ["tasks", "ls", "-q"]).stdout.strip() == "" and not cgroup_pids(env["NODE_2_CGROUP_ROOT"]),
            run(ctr + ["tasks", "ls"]).stdout))
        self.kubectl("apply", "-f", "-", stdin=json.dumps(web_pod("web-2b", names[2], image)))
        ip2b = self.wait_running(["web-2b"])["web-2b"]
        self.assertIn(ipaddress.ip_address(ip2b), subnet[2])
        self.assert_fetch(web[0], f"http://{ip2b}:{PORT}/", f"hello from {names[2]}")

        # Extended resources: node 1 alone has 4; a pod asking 3 lands there.
        res = self.node_sh("capacity", names[1], f"{GPU}=4")
        self.assertEqual(res.returncode, 0, res.stderr)
        self.assertEqual(self.node(names[1])["status"]["allocatable"].get(GPU), "4")
        gpu_pod = web_pod("gpu-3", names[1], image)
        del gpu_pod["spec"]["nodeName"]
        gpu_pod["spec"]["containers"][0]["resources"] = {"limits": {GPU: "3"}}
        self.kubectl("apply", "-f", "-", stdin=json.dumps(gpu_pod))
        self.wait_running(["gpu-3"])
        self.assertEqual(self.pods()["gpu-3"]["spec"]["nodeName"], names[1])

        # Drain node 1: its pods are evicted, it is cordoned; uncordon lifts that.
        res = self.node_sh("drain", names[1], "--force")
        self.assertEqual(res.returncode, 0, res.stdout + res.stderr)
        self.assertIn("evicting pod", res.stdout + res.stderr)
        self.wait("node 1's pods gone", 60, lambda: (
            not [n for n, p in self.pods().items() if p["spec"].get("nodeName") == names[1]],
            sorted(self.pods())))
        self.assertTrue(self.node(names[1])["spec"].get("unschedulable"))
        res = self.node_sh("uncordon", names[1])
        self.assertEqual(res.returncode, 0, res.stderr)
        self.assertFalse(self.node(names[1])["spec"].get("unschedulable"))

        # An owner killed with everything it started (what the end of a login session does to a
        # test run): nothing of the cluster runs, its bridges, routes and mounts remain. The
        # next up.sh, for another DIR, takes that down itself and starts.
        doomed = (cmdline_pids(f" {self.dir}") | cmdline_pids(f" {env['RUN']}/")
                  | set().union(*(cgroup_pids(os.path.join(env[f"NODE_{i}_CGROUP_ROOT"], "kubepods"))
                                  for i in range(3))))
        doomed.discard(os.getpid())
        for pid in doomed:
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass
        self.wait("the killed cluster's processes gone", 30,
                  lambda: (not [p for p in doomed if alive(p)], [p for p in doomed if alive(p)]))
        self.assertTrue({"ddp3d0", "ddp3d1", "ddp3d2"} <= links(), "the bridges went with the processes")
        second = os.path.join(tmp.name, "second")
        t_down = time.monotonic()
        up2 = run(["bash", UP, second])
        self.addCleanup(lambda: run(["bash", DOWN, second]))
        self.assertEqual(up2.returncode, 0, f"up.sh after a killed cluster failed:\n{up2.stderr[-4000:]}")
        self.assertIn(f"the cluster in {self.dir} has no process left", up2.stderr)
        print(f"up.sh over a killed cluster: {time.monotonic() - t_down:.1f}s", file=sys.stderr)
        self.assertEqual({l for l in links() if re.fullmatch(r"ddp3d\d+", l)}, {"ddp3d0"})
        env2 = read_env(os.path.join(second, "cluster.env"))

        # down.sh: nothing of either cluster remains.
        down = run(["bash", DOWN, second])
        downed.append(True)
        self.assertEqual(down.returncode, 0, f"down.sh failed:\n{down.stderr[-4000:]}")
        self.assertEqual({l for l in links() if re.fullmatch(r"ddp3d\d+", l)}, set())
        self.assertEqual([r for r in run(["ip", "-4", "route", "show"]).stdout.splitlines() if "10.88." in r], [])
        for d, rundir in ((self.dir, env["RUN"]), (second, env2["RUN"])):
            self.assertEqual([m for m in mounts() if m.startswith(d + "/") or m.startswith(rundir)], [])
            self.assertEqual(cluster_processes(d, rundir), [], "processes remain")
        rules = [r for save in ("iptables-save", "ip6tables-save") for r in run([save]).stdout.splitlines()
                 if r.startswith(("-A KUBE-", ":KUBE-", "-A DDP3D-", ":DDP3D-"))
                 or " -j KUBE-" in r or " -j DDP3D-" in r]
        self.assertEqual(rules, [], "iptables rules remain")
        self.assertEqual([d for d in os.listdir("/sys/fs/cgroup/pids") if d.startswith("ddp3d-node")], [])
        with open("/proc/sys/net/ipv4/ip_forward") as f:
            self.assertEqual(f.read().strip(), forward_before)

if __name__ == "__main__":
    unittest.main()
