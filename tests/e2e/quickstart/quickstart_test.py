"""docs/quickstart.md, run as written: its shell blocks, in order, in one bash, on the project's
test cluster (the page's `test-cluster` path), so that the page cannot drift from what works.

The blocks' info strings say what runs:
  ```bash               run (every reader's path)
  ```bash test-cluster  run (the test cluster's path: up.sh, images, a PersistentVolume, down.sh)
  ```bash setup         not run here: tools/test.sh has run exactly this before ctest (checked)
  ```bash kind / minikube / kube-prometheus-stack / interactive
                        not run: another cluster, a stack this cluster lacks, or a command that
                        never ends by itself (`-w`, `logs -f`); their kubectl and helm verbs are
                        still checked to exist below
Any other info string fails the test, so a new block is never skipped silently.

Then it checks what the page claims: the job Succeeded, the evaluation printed KITTI's AP40
table with a Car BEV AP above 0, the metrics endpoint answered with the step counter, the
dashboards ConfigMap exists, and nothing was left behind (down.sh). Needs root.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest

SOURCE_DIR = os.environ.get(
    "DDP3D_SOURCE_DIR",
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
PAGE = os.path.join(SOURCE_DIR, "docs", "quickstart.md")
CLUSTER_DIR = "/tmp/ddp3d-quickstart"  # the page's own path
RUN = {"", "test-cluster"}
NOT_RUN = {"setup", "kind", "minikube", "kube-prometheus-stack", "interactive"}
TIMEOUT_S = 40 * 60


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def blocks(text):
    """(info tag, first line number, body) of every ```bash block."""
    out = []
    for m in re.finditer(r"^```bash( [a-z-]+)?\n(.*?)^```$", text, re.M | re.S):
        out.append(((m.group(1) or "").strip(), text.count("\n", 0, m.start()) + 1, m.group(2)))
    return out


def down():
    if os.path.isdir(CLUSTER_DIR):
        subprocess.run(["bash", os.path.join(SOURCE_DIR, "tests", "cluster", "down.sh"),
                        CLUSTER_DIR], capture_output=True, text=True)


class QuickstartTest(unittest.TestCase):
    def setUp(self):
        if os.geteuid() != 0:
            self.fail("the quickstart runs the test cluster (tests/cluster/up.sh): needs root")
        with open(PAGE) as f:
            self.blocks = blocks(f.read())
        # A leftover of an interrupted run would make up.sh refuse the directory.
        down()
        shutil.rmtree(CLUSTER_DIR, ignore_errors=True)

    def tearDown(self):
        down()
        shutil.rmtree(CLUSTER_DIR, ignore_errors=True)

    def test_page_blocks_are_known_and_setup_is_what_ci_ran(self):
        tags = [tag for tag, _, _ in self.blocks]
        self.assertTrue(self.blocks, "no ```bash block in docs/quickstart.md")
        for tag, line, _ in self.blocks:
            self.assertIn(tag, RUN | NOT_RUN, f"docs/quickstart.md:{line}: unknown block tag {tag!r}")
        self.assertIn("test-cluster", tags)
        setup = [body.strip() for tag, _, body in self.blocks if tag == "setup"]
        self.assertEqual(setup, ["bash tools/setup.sh"])
        with open(os.path.join(SOURCE_DIR, "tools", "test.sh")) as f:
            test_sh = f.read()
        setup_at = re.search(r'^bash "\$ROOT/tools/setup.sh"$', test_sh, re.M)
        ctest_at = re.search(r"^ctest ", test_sh, re.M)
        self.assertTrue(setup_at and ctest_at and setup_at.start() < ctest_at.start(),
                        "tools/test.sh runs the page's set-up before the tests")
        # The test cluster's kubectl image (tests/cluster/build.sh) is tagged with its Kubernetes
        # version: the page must name that tag for `helm test`.
        with open(os.path.join(SOURCE_DIR, "tests", "testbin", "versions.sh")) as f:
            k8s = re.search(r"^K8S_VERSION=(\S+)$", f.read(), re.M).group(1)
        page = "".join(body for _, _, body in self.blocks)
        self.assertIn(f"--set tests.image.tag={k8s}", page)
        # The commands not run here still use verbs that exist in the real programs.
        for tag, line, body in self.blocks:
            if tag not in NOT_RUN:
                continue
            for m in re.finditer(r"^(kubectl|helm) ([a-z-]+)", body, re.M):
                res = subprocess.run([self.helm_or_kubectl(m.group(1)), m.group(2), "--help"],
                                     capture_output=True, text=True)
                self.assertEqual(res.returncode, 0,
                                 f"docs/quickstart.md:{line}: {m.group(0)}: {res.stderr[-500:]}")

    def helm_or_kubectl(self, name):
        if name == "kubectl":
            return "kubectl"
        res = subprocess.run(["bash", os.path.join(SOURCE_DIR, "tests", "testbin", "helm.sh")],
                             capture_output=True, text=True, check=True)
        return res.stdout.strip()

    def test_quickstart_runs_as_written_on_the_test_cluster(self):
        script = ["set -euo pipefail"]
        for i, (tag, line, body) in enumerate(self.blocks):
            if tag not in RUN:
                continue
            script.append(f'echo "quickstart: block {i} (docs/quickstart.md:{line}) at '
                          f'$(date +%s.%N)" >&2')
            script.append(body)
        script.append('echo "quickstart: done at $(date +%s.%N)" >&2')
        env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "HELM_NAMESPACE")}
        env["CLUSTER_OWNER_PID"] = str(os.getpid())  # up.sh's watchdog: down.sh if we die
        t0 = time.monotonic()
        # From a file: up.sh refuses a directory that a running command line names.
        script_file = tempfile.NamedTemporaryFile("w", prefix="ddp3d-quickstart-", suffix=".sh")
        self.addCleanup(script_file.close)
        script_file.write("\n".join(script) + "\n")
        script_file.flush()
        proc = subprocess.Popen(["bash", script_file.name], cwd=SOURCE_DIR, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        lines = []

        def pump():
            for out_line in proc.stdout:
                lines.append(out_line)
                sys.stderr.write(out_line)
        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        try:
            rc = proc.wait(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            rc = proc.wait()
        reader.join(10)
        output = "".join(lines)
        self.assertEqual(rc, 0, f"a quickstart command failed (exit {rc}); the last output:\n"
                                f"{output[-4000:]}")
        log(f"quickstart: whole page {time.monotonic() - t0:.1f}s")

        # The time of each block, for docs/e2e.md.
        marks = [(m.group(1), float(m.group(2))) for m in re.finditer(
            r"^quickstart: (block \d+ \(docs/quickstart.md:\d+\)|done) at ([0-9.]+)$", output, re.M)]
        for (what, t), (_, t_next) in zip(marks, marks[1:]):
            log(f"quickstart: {what}: {t_next - t:.1f}s")

        # What the page says the reader sees.
        self.assertRegex(output, r"(?m)^ddp3d_train_steps_total\S* [1-9]",
                         "the metrics endpoint answered with a step count")
        self.assertIn("----------- AP40 Results ------------", output)
        bev = re.search(r"(?ms)AP40 Results.*?^Car AP40@0\.70, 0\.70, 0\.70:.*?^bev\s+AP40:"
                        r"\s*([0-9.]+),\s*([0-9.]+),\s*([0-9.]+)", output)
        self.assertIsNotNone(bev, "Car BEV AP40 (IoU 0.7) in the evaluation's table")
        log(f"quickstart: Car BEV AP40 easy/moderate/hard {bev.group(1)}/{bev.group(2)}/{bev.group(3)}")
        self.assertGreater(float(bev.group(2)), 0.0, "the trained detector finds cars")
        self.assertRegex(output, r"(?m)^ddp3d-dashboards\s.*grafana_dashboard=1")
        # helm test: the chart's test pod saw the operator reconcile a suspended job.
        self.assertRegex(output, r"(?m)^TEST SUITE:\s+ddp3d-test\n(.*\n)*?Phase:\s+Succeeded")
        # The page ends with down.sh: nothing of the cluster is left.
        self.assertFalse(os.path.exists("/run/ddp3d-cluster.dir"), "down.sh left the cluster's mark")


if __name__ == "__main__":
    unittest.main(verbosity=2)
