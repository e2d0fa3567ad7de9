"""Checkpoint on SIGTERM and collective resume, with 2 real ranks over Gloo.

- SIGTERM to one rank only, mid-epoch: both ranks agree on one iteration, save iter_<N>.pth,
  exit 201 ("preempted, resumable"); `--resume auto` continues at the same sample, on the same
  loss curve as an uninterrupted run.
- SIGTERM to the launcher (tools/dist_train.sh): it forwards it, and exits 201 itself.
- Per-rank work dirs (one volume per pod): only rank 0's is read and its checkpoint reaches
  rank 1, whose own dir holds an older one.
"""
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from toy_training_test import (BINARY, CONFIG, WORLD, free_port, read_output, run_dirs,  # noqa: E402
                               start_ranks, train_records, wait_all)

PREEMPTED = 201
SOURCE = os.environ["DDP3D_SOURCE_DIR"]
# 128 iterations per epoch, every one logged: a signal lands well inside an epoch.
COMMON = ["--cfg-options", "train_dataloader.dataset.num_samples=4096",
          "default_hooks.logger.interval=1", "default_hooks.checkpoint.max_keep_ckpts=-1"]
ITERS_PER_EPOCH = 128


def records_so_far(work):
    dirs = run_dirs(work)
    if not dirs:
        return []
    path = os.path.join(dirs[-1], "vis_data", "scalars.json")
    if not os.path.exists(path):
        return []
    with open(path) as f:
        lines = f.read().splitlines()
    out = []
    for line in lines:
        try:
            out.append(json.loads(line))
        except ValueError:
            pass  # a line being written
    return [r for r in out if "lr" in r]


def wait_for_record(work, procs, pred, what, timeout=120):
    deadline = time.time() + timeout
    while True:
        if any(pred(r) for r in records_so_far(work)):
            return
        if time.time() > deadline or any(p.poll() is not None for p in procs):
            for p in procs:
                if p.poll() is None:
                    os.killpg(p.pid, signal.SIGKILL)
            raise AssertionError("no record with %s before the ranks ended" % what)
        time.sleep(0.01)


class Preemption(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="ddp3d_preempt_")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def reference(self):
        ref = os.path.join(self.tmp, "ref")
        codes = wait_all(start_ranks(lambda r: ["--work-dir", ref] + COMMON, self.tmp, "ref"))
        self.assertEqual(codes, [0, 0], read_output(self.tmp, "ref"))
        return {(r["epoch"], r["iter"]): r for r in train_records(run_dirs(ref)[-1])}

    def preempt_rank1_mid_epoch(self, work):
        procs = start_ranks(lambda r: ["--work-dir", work] + COMMON, self.tmp, "term")
        # (`iter` and `step` count across epochs.)
        wait_for_record(work, procs, lambda r: r["step"] >= ITERS_PER_EPOCH + 10,
                        "step %d" % (ITERS_PER_EPOCH + 10))
        procs[1].send_signal(signal.SIGTERM)  # rank 1 only: rank 0 must learn it from rank 1
        codes = wait_all(procs, timeout=60)
        outs = [read_output(self.tmp, "term", r) for r in range(WORLD)]
        self.assertEqual(codes, [PREEMPTED, PREEMPTED], outs)
        saved = glob.glob(os.path.join(work, "iter_*.pth"))
        self.assertEqual(len(saved), 1, saved)
        n = int(os.path.basename(saved[0])[5:-4])
        self.assertIn("a termination signal on rank 1: saving %s" % saved[0], outs[0])
        self.assertIn("rank 1 received SIGTERM; a termination signal on rank 1", outs[1])
        # Stopped inside epoch 2, soon after the signal, and nothing trained after the save.
        self.assertGreater(n, ITERS_PER_EPOCH + 10)
        self.assertLess(n, 2 * ITERS_PER_EPOCH)
        self.assertEqual(max(r["step"] for r in records_so_far(work)), n)
        return n

    def assert_same_curve(self, reference, resumed, n):
        self.assertEqual(resumed[0]["step"], n + 1)
        self.assertEqual((resumed[0]["epoch"], resumed[0]["iter"]), (2, n + 1))
        self.assertEqual(resumed[-1]["epoch"], 6)
        worst = 0.0
        for r in resumed:
            ref = reference[(r["epoch"], r["iter"])]
            self.assertAlmostEqual(r["lr"], ref["lr"], places=12)
            worst = max(worst, abs(r["loss"] - ref["loss"]) / max(1e-12, abs(ref["loss"])))
        print("resumed at step %d: %d records, max relative loss difference %.3g"
              % (n + 1, len(resumed), worst))
        self.assertLess(worst, 1e-6)

    def test_sigterm_to_one_rank_mid_epoch_checkpoints_all_and_resumes_on_the_same_curve(self):
        reference = self.reference()
        work = os.path.join(self.tmp, "work")
        n = self.preempt_rank1_mid_epoch(work)
        codes = wait_all(start_ranks(lambda r: ["--work-dir", work, "--resume", "auto"] + COMMON,
                                     self.tmp, "resumed"))
        out = read_output(self.tmp, "resumed")
        self.assertEqual(codes, [0, 0], out)
        self.assertIn("resumed from %s at epoch 1, iteration %d (%d iterations into epoch 2)"
                      % (os.path.join(work, "iter_%d.pth" % n), n, n - ITERS_PER_EPOCH), out)
        self.assertIn("the same state on all 2 ranks", out)
        self.assert_same_curve(reference, train_records(run_dirs(work)[-1]), n)

    def test_per_rank_work_dirs_resume_from_rank_zeros_checkpoint(self):
        reference = self.reference()
        shared = os.path.join(self.tmp, "rank0")
        n = self.preempt_rank1_mid_epoch(shared)
        # Rank 1's own volume: an older checkpoint of the same run, which must not be used.
        own = os.path.join(self.tmp, "rank1")
        os.makedirs(own)
        shutil.copy(os.path.join(shared, "epoch_1.pth"), own)
        dirs = [shared, own]
        codes = wait_all(start_ranks(
            lambda r: ["--work-dir", dirs[r], "--resume", "auto"] + COMMON, self.tmp, "split"))
        out = read_output(self.tmp, "split")
        self.assertEqual(codes, [0, 0], out + read_output(self.tmp, "split", 1))
        self.assertIn("rank 1's work dir holds epoch_1.pth, rank 0 resumes from iter_%d.pth" % n,
                      out)
        self.assert_same_curve(reference, train_records(run_dirs(shared)[-1]), n)

    def test_sigterm_to_the_launcher_is_forwarded_and_it_exits_preempted(self):
        work = os.path.join(self.tmp, "launched")
        env = dict(os.environ, DDP3D_BIN=BINARY, PORT=str(free_port()), OMP_NUM_THREADS="1")
        with open(os.path.join(self.tmp, "launcher.txt"), "w") as out:
            launcher = subprocess.Popen(
                ["bash", os.path.join(SOURCE, "tools", "dist_train.sh"), CONFIG, "2",
                 "--work-dir", work] + COMMON, env=env, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True)
        try:
            wait_for_record(work, [launcher], lambda r: r["step"] >= 5, "step 5")
            launcher.send_signal(signal.SIGTERM)
            code = launcher.wait(timeout=60)
        finally:
            if launcher.poll() is None:
                os.killpg(launcher.pid, signal.SIGKILL)
        with open(os.path.join(self.tmp, "launcher.txt")) as f:
            out = f.read()
        self.assertEqual(code, PREEMPTED, out)
        self.assertIn("received SIGTERM: forwarding to the ranks", out)
        self.assertEqual(len(glob.glob(os.path.join(work, "iter_*.pth"))), 1, out)


if __name__ == "__main__":
    unittest.main()
