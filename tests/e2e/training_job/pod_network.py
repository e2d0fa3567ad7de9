"""Pod networking for the e2e kubelet: one network namespace per pod on a private bridge.

Each harness run leases its own /24 (10.250.<n>.0/24) and bridge `d3e<n>br`, so runs can
proceed concurrently. A pod gets a netns `ddp3d-e2e<n>-<slot>` with `eth0` = one end of a
veth pair whose other end sits on the bridge, address 10.250.<n>.<slot+2>, and loopback up.
The bridge has no address and nothing routes off it: pod traffic stays between the pods of
this run.

DNS: `ip netns exec` bind-mounts /etc/netns/<ns>/hosts over /etc/hosts, and glibc reads
/etc/hosts on every lookup, so rewriting those files *in place* (same inode) acts like the
cluster DNS updating: each pod resolves its own and its peers' `<pod>.<svc>.<ns>.svc[.cluster.local]`
names as Kubernetes' headless-Service records (publishNotReadyAddresses) would give them.
"""

import ipaddress
import os
import signal
import subprocess
import time

LEASE_DIR = "/run/ddp3d-e2e"
SUBNET_BASE = ipaddress.ip_network("10.250.0.0/16")
MAX_SLOTS = 250


def _ip(*args, check=True):
    res = subprocess.run(["ip", *args], capture_output=True, text=True)
    if check and res.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)} failed: {res.stderr.strip()}")
    return res


def netns_supported():
    """True when this process may create network namespaces (probed, not assumed)."""
    name = f"ddp3d-e2e-probe-{os.getpid()}"
    res = subprocess.run(["ip", "netns", "add", name], capture_output=True, text=True)
    if res.returncode != 0:
        return False
    subprocess.run(["ip", "netns", "del", name], capture_output=True)
    return True


def _pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def netns_pids(name):
    res = _ip("netns", "pids", name, check=False)
    return [int(p) for p in res.stdout.split()] if res.returncode == 0 else []


def kill_netns_processes(name, sig=signal.SIGKILL, wait_s=5.0):
    """Signals every process inside netns `name` (a container's whole process tree, like
    the runtime killing the cgroup); with SIGKILL, waits until none is left."""
    deadline = time.monotonic() + wait_s
    while True:
        pids = netns_pids(name)
        if not pids:
            return True
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        if sig != signal.SIGKILL or time.monotonic() > deadline:
            return not netns_pids(name)
        time.sleep(0.05)


def _teardown(index):
    """Removes every netns, hosts folder and the bridge of run `index`."""
    prefix = f"ddp3d-e2e{index}-"
    listing = _ip("netns", "list", check=False).stdout.split("\n")
    for line in listing:
        name = line.split(" ")[0]
        if name.startswith(prefix):
            kill_netns_processes(name)
            _ip("netns", "del", name, check=False)
    if os.path.isdir("/etc/netns"):
        for entry in os.listdir("/etc/netns"):
            if entry.startswith(prefix):
                _remove_tree(os.path.join("/etc/netns", entry))
    _ip("link", "del", f"d3e{index}br", check=False)


def _remove_tree(path):
    for root, dirs, files in os.walk(path, topdown=False):
        for f in files:
            os.unlink(os.path.join(root, f))
        for d in dirs:
            os.rmdir(os.path.join(root, d))
    os.rmdir(path)


class PodNetwork:
    """A leased subnet + bridge; hands out per-pod network namespaces."""

    def __init__(self):
        self.index = None
        self.bridge = None
        self.subnet = None
        self._slots = {}  # slot -> pod key
        self._hosts_files = {}  # pod key -> path

    # -- lifecycle ------------------------------------------------------------
    def __enter__(self):
        self.open()
        return self

    def __exit__(self, *exc):
        self.close()

    def open(self):
        os.makedirs(LEASE_DIR, exist_ok=True)
        self._reap_stale_leases()
        used = _ip("-o", "-4", "addr", check=False).stdout
        for index in range(256):
            subnet = list(SUBNET_BASE.subnets(new_prefix=24))[index]
            if str(subnet.network_address)[:-1] in used:
                continue  # someone outside this harness uses that range
            lease = os.path.join(LEASE_DIR, f"lease-{index}")
            try:
                fd = os.open(lease, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                continue
            with os.fdopen(fd, "w") as f:
                f.write(str(os.getpid()))
            self.index, self.subnet = index, subnet
            break
        else:
            raise RuntimeError(f"no free /24 left in {SUBNET_BASE} (leases in {LEASE_DIR})")
        self.bridge = f"d3e{self.index}br"
        _teardown(self.index)  # leftovers of a crashed run that held this index
        _ip("link", "add", self.bridge, "type", "bridge")
        _ip("link", "set", self.bridge, "up")
        return self

    def close(self):
        if self.index is None:
            return
        _teardown(self.index)
        try:
            os.unlink(os.path.join(LEASE_DIR, f"lease-{self.index}"))
        except FileNotFoundError:
            pass
        self.index = None

    def _reap_stale_leases(self):
        for entry in os.listdir(LEASE_DIR):
            if not entry.startswith("lease-"):
                continue
            path = os.path.join(LEASE_DIR, entry)
            try:
                pid = int(open(path).read().strip() or "0")
            except (OSError, ValueError):
                continue
            if pid and not _pid_alive(pid):
                _teardown(int(entry[len("lease-"):]))
                os.unlink(path)

    # -- pods -----------------------------------------------------------------
    def netns_name(self, slot):
        return f"ddp3d-e2e{self.index}-{slot}"

    def add_pod(self, key):
        """Creates the pod's netns and returns (netns name, IP address)."""
        slot = next(s for s in range(MAX_SLOTS) if s not in self._slots)
        self._slots[slot] = key
        ns = self.netns_name(slot)
        ip = str(self.subnet.network_address + slot + 2)
        host_end = f"d3e{self.index}v{slot}"
        _ip("netns", "add", ns)
        _ip("link", "add", host_end, "type", "veth", "peer", "name", "eth0", "netns", ns)
        _ip("link", "set", host_end, "master", self.bridge, "up")
        _ip("-n", ns, "addr", "add", f"{ip}/{self.subnet.prefixlen}", "dev", "eth0")
        _ip("-n", ns, "link", "set", "eth0", "up")
        _ip("-n", ns, "link", "set", "lo", "up")
        hosts_dir = os.path.join("/etc/netns", ns)
        os.makedirs(hosts_dir, exist_ok=True)
        path = os.path.join(hosts_dir, "hosts")
        open(path, "w").close()
        self._hosts_files[key] = path
        return ns, ip

    def remove_pod(self, key):
        slot = next((s for s, k in self._slots.items() if k == key), None)
        if slot is None:
            return
        ns = self.netns_name(slot)
        kill_netns_processes(ns)
        _ip("netns", "del", ns, check=False)
        _ip("link", "del", f"d3e{self.index}v{slot}", check=False)
        hosts_dir = os.path.join("/etc/netns", ns)
        if os.path.isdir(hosts_dir):
            _remove_tree(hosts_dir)
        del self._slots[slot]
        self._hosts_files.pop(key, None)

    def write_hosts(self, key, records):
        """Rewrites pod `key`'s /etc/hosts in place with `records` [(ip, [names])]."""
        path = self._hosts_files.get(key)
        if path is None:
            return
        lines = ["127.0.0.1\tlocalhost", "::1\tlocalhost ip6-localhost ip6-loopback"]
        lines += [f"{ip}\t{' '.join(names)}" for ip, names in records]
        data = ("\n".join(lines) + "\n").encode()
        # In place (same inode): running processes see the file through a bind mount.
        with open(path, "r+b") as f:
            f.truncate(0)
            f.write(data)
