"""tools/build_images.sh builds images that are what they claim, and that run.

Builds ddp3d/worker:dev and ddp3d/operator:dev from this build tree's binaries (a cold run
makes the Debian base with mmdebstrap: a minute or two), then checks each OCI archive as a
consumer would: the layout, every blob's digest, the names containerd and skopeo look up,
a numeric non-root user in the config; then pulls each archive into a fresh buildah store of
its own and runs the image as its user: the worker's entry point trains the 2-process toy
config (LibTorch, Gloo, the shared-memory all-reduce) and the operator parses the chart's
flags. A second run must find everything up to date. With the test cluster's containerd
built (tests/cluster/build.sh), `--load` is checked against a private containerd.

Needs root, buildah and mmdebstrap (Debian packages), and deb.debian.org on a cold run.
"""

import hashlib
import json
import os
import shutil
import signal
import subprocess
import tarfile
import tempfile
import time
import unittest

SOURCE_DIR = os.environ.get(
    "DDP3D_SOURCE_DIR", os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..")))
BINARY_DIR = os.environ.get("DDP3D_BINARY_DIR", os.path.join(SOURCE_DIR, "build"))
SCRIPT = os.path.join(SOURCE_DIR, "tools", "build_images.sh")
CACHE = os.environ.get("DDP3D_CACHE", os.path.expanduser("~/.cache/ddp3d"))

IMAGES = {
    "worker": {"ref": "docker.io/ddp3d/worker:dev", "user": "10001:10001",
               "entrypoint": ["bash", "tools/dist_train.sh"], "workdir": "/workspace/ddp3d"},
    "operator": {"ref": "docker.io/ddp3d/operator:dev", "user": "65532:65532",
                 "entrypoint": ["/usr/local/bin/ddp3d-operator"], "workdir": None},
}


def build_images(*args, build_dir=BINARY_DIR):
    env = {**os.environ, "DDP3D_BUILD_DIR": build_dir}
    start = time.monotonic()
    res = subprocess.run(["bash", SCRIPT, *args], capture_output=True, text=True, env=env, timeout=1700)
    return res, time.monotonic() - start


class OciArchive:
    """An OCI image layout in a tar, read without unpacking it."""

    def __init__(self, path):
        self.tar = tarfile.open(path)
        self.names = set(self.tar.getnames())

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.tar.close()

    def json(self, name):
        return json.load(self.tar.extractfile(name))

    def blob(self, descriptor):
        algo, digest = descriptor["digest"].split(":", 1)
        name = f"blobs/{algo}/{digest}"
        if name not in self.names:
            raise AssertionError(f"{name} is missing")
        h, size = hashlib.sha256(), 0
        f = self.tar.extractfile(name)
        while chunk := f.read(1 << 20):
            h.update(chunk)
            size += len(chunk)
        if h.hexdigest() != digest or size != descriptor["size"]:
            raise AssertionError(f"{name}: content does not match its descriptor")
        return self.tar.extractfile(name).read() if size < (1 << 20) else None


class ImagesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        res, cls.cold_s = build_images("--print")
        print(res.stderr, end="", flush=True)
        if res.returncode != 0:
            raise AssertionError(f"build_images.sh failed ({res.returncode}):\n{res.stderr[-4000:]}")
        cls.archives = dict(zip(IMAGES, res.stdout.split()))

    def test_prints_the_archives(self):
        self.assertEqual(list(self.archives.values()),
                         [os.path.join(CACHE, "images", f"{n}-dev.tar") for n in IMAGES])
        for path in self.archives.values():
            self.assertTrue(os.path.isfile(path) and os.path.isfile(path + ".stamp"), path)

    def test_archives_are_oci_layouts_named_for_kubernetes(self):
        for name, want in IMAGES.items():
            with self.subTest(name):
                with OciArchive(self.archives[name]) as oci:
                    self.check_archive(oci, want)

    def check_archive(self, oci, want):
        self.assertEqual(oci.json("oci-layout"), {"imageLayoutVersion": "1.0.0"})
        index = oci.json("index.json")
        self.assertEqual(len(index["manifests"]), 1)
        desc = index["manifests"][0]
        self.assertEqual(desc["mediaType"], "application/vnd.oci.image.manifest.v1+json")
        # skopeo/buildah look images up by ref.name, `ctr images import` names them by
        # io.containerd.image.name: both must be what the pods' image normalises to.
        self.assertEqual(desc["annotations"]["org.opencontainers.image.ref.name"], want["ref"])
        self.assertEqual(desc["annotations"]["io.containerd.image.name"], want["ref"])
        manifest = json.loads(oci.blob(desc))
        self.assertEqual(manifest["config"]["mediaType"], "application/vnd.oci.image.config.v1+json")
        config = json.loads(oci.blob(manifest["config"]))
        for layer in manifest["layers"]:
            oci.blob(layer)
        self.assertEqual(len(config["rootfs"]["diff_ids"]), len(manifest["layers"]))
        self.assertEqual((config["os"], config["architecture"]), ("linux", "amd64"))
        c = config["config"]
        uid, _, gid = c["User"].partition(":")
        self.assertTrue(uid.isdigit() and gid.isdigit() and int(uid) != 0,
                        f"runAsNonRoot needs a numeric non-root user, not {c['User']!r}")
        self.assertEqual(c["User"], want["user"])
        self.assertEqual(c["Entrypoint"], want["entrypoint"])
        if want["workdir"]:
            self.assertEqual(c["WorkingDir"], want["workdir"])

    def run_in_image(self, name, argv, timeout=300):
        """Pulls the archive by its name into a fresh store and runs argv as the image's user
        (buildah run takes the user, working directory and environment from the config)."""
        with tempfile.TemporaryDirectory(prefix="ddp3d-images-test.") as tmp:
            bh = ["buildah", "--root", f"{tmp}/root", "--runroot", f"{tmp}/run", "--storage-driver", "vfs"]
            src = f"oci-archive:{self.archives[name]}:{IMAGES[name]['ref']}"
            res = subprocess.run([*bh, "from", "--quiet", "--name", f"t-{name}", src],
                                 capture_output=True, text=True, timeout=600)
            if res.returncode != 0:
                self.fail(f"buildah from {src}: {res.stderr}")
            try:
                return subprocess.run([*bh, "run", "--isolation", "chroot", f"t-{name}", "--", *argv],
                                      capture_output=True, text=True, timeout=timeout)
            finally:
                subprocess.run([*bh, "rm", f"t-{name}"], capture_output=True)
                subprocess.run([*bh, "rmi", "--all", "--force"], capture_output=True)
                # vfs layers are plain directories, but buildah may leave mounts behind.
                subprocess.run(["umount", "-R", f"{tmp}/root"], capture_output=True)

    def test_worker_trains_the_toy_config_as_its_user(self):
        script = ("set -e; echo uid=$(id -u):$(id -g); "
                  "! test -w /usr/local/bin/ddp3d; "  # the image's files are not the user's
                  f"exec {' '.join(IMAGES['worker']['entrypoint'])} "
                  "configs/toy/toy_regression_2proc.yaml 2 --work-dir /tmp/w")
        res = self.run_in_image("worker", ["bash", "-c", script])
        out = res.stdout + res.stderr
        self.assertEqual(res.returncode, 0, out[-4000:])
        self.assertIn("uid=10001:10001", out)
        self.assertIn("training finished", out)
        self.assertIn("all 2 process(es) finished", out)

    def test_operator_parses_the_charts_flags_as_its_user(self):
        res = self.run_in_image("operator", ["sh", "-c", "id -u; exec /usr/local/bin/ddp3d-operator "
                                             "--leader-elect --metrics-address=:8080 "
                                             "--health-address=:8081 --help"])
        self.assertEqual(res.returncode, 0, res.stderr[-4000:])
        self.assertEqual(res.stdout.splitlines()[0], "65532")
        self.assertIn("usage: ddp3d-operator", res.stdout + res.stderr)

    def test_a_second_run_rebuilds_nothing(self):
        mtimes = {p: os.stat(p).st_mtime_ns for p in self.archives.values()}
        res, took = build_images("--print")
        self.assertEqual(res.returncode, 0, res.stderr)
        for name in IMAGES:
            self.assertIn(f"{name}: up to date", res.stderr)
        self.assertNotIn("mmdebstrap", res.stderr)
        self.assertEqual({p: os.stat(p).st_mtime_ns for p in self.archives.values()}, mtimes)
        self.assertLess(took, 30, f"a warm run took {took:.1f}s")

    def test_a_missing_binary_is_named(self):
        with tempfile.TemporaryDirectory() as empty:
            res, _ = build_images("--only", "worker", build_dir=empty)
        self.assertNotEqual(res.returncode, 0)
        self.assertIn(f"{empty}/worker/ddp3d not built: run tools/setup.sh", res.stderr)

    def test_load_imports_into_containerd(self):
        bin_dir = cluster_bin_dir()
        containerd, ctr = os.path.join(bin_dir, "containerd"), os.path.join(bin_dir, "ctr")
        if not (os.access(containerd, os.X_OK) and os.access(ctr, os.X_OK)):
            self.skipTest(f"no containerd/ctr in {bin_dir}: tests/cluster/build.sh runtime builds them")
        tmp = tempfile.mkdtemp(prefix="ddp3d-images-ctrd.")
        sock = f"{tmp}/containerd.sock"
        with open(f"{tmp}/config.toml", "w") as f:
            # Only the image store: no CRI (it would look for CNI and runc).
            f.write('version = 3\ndisabled_plugins = ["io.containerd.grpc.v1.cri", '
                    '"io.containerd.cri.v1.runtime", "io.containerd.cri.v1.images"]\n')
        log = open(f"{tmp}/containerd.log", "w")
        proc = subprocess.Popen([containerd, "--config", f"{tmp}/config.toml", "--root", f"{tmp}/root",
                                 "--state", f"{tmp}/state", "--address", sock],
                                stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 30
            while not os.path.exists(sock):
                if proc.poll() is not None:
                    with open(f"{tmp}/containerd.log") as f:
                        self.fail(f"containerd exited: {f.read()[-2000:]}")
                self.assertLess(time.monotonic(), deadline, "containerd did not start")
                time.sleep(0.2)
            env = {**os.environ, "DDP3D_BUILD_DIR": BINARY_DIR, "CTR": ctr}
            for attempt in ("import", "already"):
                res = subprocess.run(["bash", SCRIPT, "--load", sock], capture_output=True, text=True,
                                     env=env, timeout=600)
                self.assertEqual(res.returncode, 0, res.stderr[-3000:])
                for name, want in IMAGES.items():
                    if attempt == "already":
                        self.assertIn(f"{name}: {want['ref']} already in {sock}", res.stderr)
            listed = subprocess.run([ctr, "--address", sock, "-n", "k8s.io", "images", "ls", "-q"],
                                    capture_output=True, text=True, check=True).stdout.split()
            self.assertTrue({w["ref"] for w in IMAGES.values()} <= set(listed), listed)
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            log.close()
            subprocess.run(["umount", "-R", f"{tmp}/root"], capture_output=True)
            shutil.rmtree(tmp, ignore_errors=True)


def cluster_bin_dir():
    versions = os.path.join(SOURCE_DIR, "tests", "cluster", "versions.sh")
    k8s = subprocess.run(["bash", "-c", f'source "{versions}" && echo "$K8S_VERSION"'],
                         capture_output=True, text=True).stdout.strip()
    return os.path.join(CACHE, "cluster", k8s, "bin")


if __name__ == "__main__":
    unittest.main(verbosity=2)
