"""Kueue's CRDs for the integration tests' API servers: the same manifests that
tests/cluster/kueue.sh installs (v0.17, copied from the module source by
`tests/cluster/build.sh kueue`, cached outside the tree). Only the CRDs: no Kueue process,
no webhooks, so a test plays Kueue's part itself (admits a Workload by writing its status)."""

import os
import subprocess
import time

SOURCE_DIR = os.environ.get(
    "DDP3D_SOURCE_DIR",
    os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
CLUSTER = os.path.join(SOURCE_DIR, "tests", "cluster")
# Every CRD of Kueue's v1beta2 API that a test or an example uses.
CRDS = ("workloads", "resourceflavors", "clusterqueues", "localqueues", "workloadpriorityclasses")


def crd_dir():
    """The cached folder of Kueue's CRD manifests (builds the cache on first use; the ctest
    fixture integration.kueue_manifests does that with a long timeout)."""
    res = subprocess.run(["bash", os.path.join(CLUSTER, "build.sh"), "kueue"],
                         capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"tests/cluster/build.sh kueue failed:\n{res.stderr[-4000:]}")
    cache = res.stdout.strip().splitlines()[-1]
    version = subprocess.run(["bash", "-c", f"source {CLUSTER}/versions.sh; echo $KUEUE_VERSION"],
                             capture_output=True, text=True, check=True).stdout.strip()
    path = os.path.join(cache, "kueue", f"manifests-{version}", "crd")
    if not os.path.isdir(path):
        raise RuntimeError(f"no Kueue CRDs in {path}")
    return path


def install(cp):
    """Applies Kueue's CRDs to ControlPlane `cp` and waits until they are Established.
    Server-side: the Workload CRD is too big for kubectl's last-applied annotation."""
    path = crd_dir()
    files = [os.path.join(path, f"kueue.x-k8s.io_{c}.yaml") for c in CRDS]
    cp.kubectl("apply", "--server-side", *[a for f in files for a in ("-f", f)], check=True)
    deadline = time.monotonic() + 60
    for c in CRDS:
        # (kubectl wait fails on a CRD whose status has no conditions yet.)
        while cp.kubectl("get", f"crd/{c}.kueue.x-k8s.io", "-o",
                         "jsonpath={.status.conditions[?(@.type=='Established')].status}"
                         ).stdout != "True":
            if time.monotonic() > deadline:
                raise AssertionError(f"CRD {c}.kueue.x-k8s.io not Established after 60 s")
            time.sleep(0.2)
