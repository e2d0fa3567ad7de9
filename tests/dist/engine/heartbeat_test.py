"""Peer heartbeats with real ranks over Gloo on loopback: a rank frozen with SIGSTOP mid-training
makes its peer stop within env_cfg.dist_cfg.heartbeat_timeout with exit code 200 (kPeerLost),
naming the frozen rank and its host; a healthy run with a short heartbeat timeout finishes.

Ranks are started the way `ddp3d launch` starts them (see toy_training_test.py).
"""
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import unittest

from toy_training_test import read_output, start_ranks, wait_all

PEER_LOST = 200  # common/exit_codes.h
TIMEOUT = 3.0    # the heartbeat timeout these runs use, seconds
HEARTBEAT = ["env_cfg.dist_cfg.heartbeat_timeout=%g" % TIMEOUT,
             "env_cfg.dist_cfg.heartbeat_interval=0.5"]
# Long enough that the freeze lands mid-training.
LONG = ["train_cfg.max_epochs=1000", "default_hooks.checkpoint.interval=100"]


class Heartbeat(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="ddp3d_heartbeat_")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def freeze(self, frozen, extra=()):
        """Freezes rank `frozen` once training runs; returns the peer's code, seconds from the
        freeze to its exit, its output and the frozen rank's pid."""
        tag = "frozen%d" % frozen
        procs = start_ranks(["--work-dir", os.path.join(self.tmp, tag), "--cfg-options"]
                            + HEARTBEAT + LONG + list(extra), self.tmp, tag)
        peer = procs[1 - frozen]
        try:
            deadline = time.monotonic() + 120
            while "Epoch(train)" not in read_output(self.tmp, tag, 0):
                self.assertLess(time.monotonic(), deadline, read_output(self.tmp, tag, 0))
                self.assertTrue(all(p.poll() is None for p in procs), read_output(self.tmp, tag, 0))
                time.sleep(0.01)
            os.kill(procs[frozen].pid, signal.SIGSTOP)
            start = time.monotonic()
            code = peer.wait(timeout=TIMEOUT + 60)
            elapsed = time.monotonic() - start
        finally:
            for p in procs:
                if p.poll() is None:
                    os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        out = read_output(self.tmp, tag, 1 - frozen)
        print("rank %d frozen: rank %d exited %s after %.2f s (heartbeat timeout %.1f s)"
              % (frozen, 1 - frozen, code, elapsed, TIMEOUT))
        return code, elapsed, out, procs[frozen].pid

    def check_lost(self, code, elapsed, out):
        self.assertEqual(code, PEER_LOST, out)
        # The last beat before the freeze is at most one interval (0.5 s) old; the verdict comes
        # within a fraction of an interval after the timeout.
        self.assertGreater(elapsed, TIMEOUT - 1.0, out)
        self.assertLess(elapsed, TIMEOUT + 2.5, out)
        self.assertIn("stopping with exit code 200", out)

    def test_a_frozen_rank_stops_its_peer_within_the_timeout(self):
        # One node: gradients go through the shared-memory all-reduce, where the peer spins.
        code, elapsed, out, pid = self.freeze(1)
        self.check_lost(code, elapsed, out)
        self.assertIn("rank 1 (host %s, pid %d) has not heartbeated for" % (socket.gethostname(), pid),
                      out)

    def test_a_frozen_rank_stops_its_peer_blocked_in_gloo(self):
        code, elapsed, out, pid = self.freeze(1, ["env_cfg.dist_cfg.shared_memory_allreduce=false"])
        self.check_lost(code, elapsed, out)
        self.assertIn("rank 1 (host %s, pid %d)" % (socket.gethostname(), pid), out)

    def test_a_frozen_rank_zero_is_a_store_that_stops_answering(self):
        code, elapsed, out, pid = self.freeze(0)
        self.check_lost(code, elapsed, out)
        self.assertIn("hosted by rank 0 (host %s, pid %d), has not answered for"
                      % (socket.gethostname(), pid), out)

    def test_a_healthy_run_with_a_short_timeout_finishes(self):
        work = os.path.join(self.tmp, "healthy")
        codes = wait_all(start_ranks(["--work-dir", work, "--cfg-options"] + HEARTBEAT, self.tmp, "ok"))
        out = read_output(self.tmp, "ok")
        self.assertEqual(codes, [0, 0], out + read_output(self.tmp, "ok", 1))
        self.assertIn("heartbeat every 0.5 s, peers lost after 3 s", out)
        self.assertNotIn("peer lost", out + read_output(self.tmp, "ok", 1))


if __name__ == "__main__":
    unittest.main(verbosity=2)
