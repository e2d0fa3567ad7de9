"""The authenticated rendezvous between real ranks over Gloo on loopback: ranks that share
DDP3D_RENDEZVOUS_TOKEN train; a rank with another token, or none, is refused and every rank
exits naming it; a malformed token fails before any rendezvous, without printing it; a rank
left over from an earlier attempt (DDP3D_ATTEMPT) that reaches a later attempt's store joins
nothing there and the later attempt trains undisturbed.
"""
import os
import shutil
import subprocess
import tempfile
import time
import unittest

from toy_training_test import BINARY, CONFIG, WORLD, free_port, read_output, wait_all

TOKEN = "0f3c9a7e5b1d4c2a8e6f0b9d7c5a3e1f"


def start(tokens, log_dir, tag, extra=(), port=None, attempt=None, ranks=None, timeout=30):
    """One rank per entry of `tokens` (None: the variable is unset for that rank); `ranks`
    names them (default 0, 1, ...), `attempt` sets DDP3D_ATTEMPT."""
    port = port or free_port()
    procs = []
    for rank, token in zip(ranks or range(len(tokens)), tokens):
        env = {k: v for k, v in os.environ.items() if k != "DDP3D_RENDEZVOUS_TOKEN"}
        env.update(RANK=str(rank), WORLD_SIZE=str(WORLD), LOCAL_RANK=str(rank),
                   LOCAL_WORLD_SIZE=str(WORLD), GROUP_RANK="0", MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=str(port), OMP_NUM_THREADS="1")
        env.pop("DDP3D_ATTEMPT", None)
        if attempt is not None:
            env["DDP3D_ATTEMPT"] = str(attempt)
        if token is not None:
            env["DDP3D_RENDEZVOUS_TOKEN"] = token
        with open(os.path.join(log_dir, "%s_rank%d.txt" % (tag, rank)), "w") as out:
            procs.append(subprocess.Popen(
                [BINARY, "train", CONFIG, "--launcher", "pytorch", "--work-dir",
                 os.path.join(log_dir, tag), "--cfg-options",
                 "env_cfg.dist_cfg.timeout=%d" % timeout]
                + list(extra), env=env, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True))
    return procs


class RendezvousAuth(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="ddp3d_rdzv_auth_")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def outputs(self, tag):
        return [read_output(self.tmp, tag, r) for r in range(WORLD)]

    def test_ranks_with_the_job_token_train(self):
        codes = wait_all(start([TOKEN, TOKEN], self.tmp, "ok"))
        out = self.outputs("ok")
        self.assertEqual(codes, [0, 0], "\n".join(out))
        self.assertIn("rendezvous authenticated: every rank holds the job's token", out[0])
        for text in out:
            self.assertNotIn(TOKEN, text)

    def test_a_rank_with_another_token_is_refused_by_every_rank(self):
        codes = wait_all(start([TOKEN, "not-the-job-token"], self.tmp, "wrong"), timeout=90)
        out = self.outputs("wrong")
        self.assertTrue(all(c != 0 for c in codes), "\n".join(out))
        for text in out:
            self.assertIn("rendezvous authentication failed: rank 1 presented a token other "
                          "than rank 0's", text)
            self.assertNotIn("Epoch(train)", text)

    def test_a_rank_without_a_token_is_refused_by_every_rank(self):
        codes = wait_all(start([TOKEN, None], self.tmp, "none"), timeout=90)
        out = self.outputs("none")
        self.assertTrue(all(c != 0 for c in codes), "\n".join(out))
        for text in out:
            self.assertIn("rendezvous authentication failed: rank 1 presented no "
                          "DDP3D_RENDEZVOUS_TOKEN", text)

    def test_a_malformed_token_fails_before_the_rendezvous_without_printing_it(self):
        bad = "has a space " + TOKEN
        codes = wait_all(start([bad, bad], self.tmp, "bad"), timeout=60)
        out = self.outputs("bad")
        self.assertTrue(all(c != 0 for c in codes), "\n".join(out))
        for text in out:
            self.assertIn("environment variable DDP3D_RENDEZVOUS_TOKEN holds a space or control "
                          "character", text)
            self.assertNotIn("rendezvous at", text)
            self.assertNotIn(TOKEN, text)

    def test_a_rank_of_an_earlier_attempt_cannot_join_a_later_one(self):
        # Rank 1 of attempt 0 outlived its attempt (its node was lost, its pod force-deleted) and
        # dials the address rank 0 of attempt 1 now holds, with the old token, before attempt
        # 1's own rank 1 does. It must neither be counted nor spoil attempt 1's proofs.
        port = free_port()
        stale = start(["an-old-attempts-token"], self.tmp, "stale", port=port, attempt=0,
                      ranks=[1], timeout=15)
        time.sleep(1.0)
        fresh = start([TOKEN, TOKEN], self.tmp, "fresh", port=port, attempt=1)
        codes = wait_all(fresh, timeout=120)
        out = self.outputs("fresh")
        self.assertEqual(codes, [0, 0], "\n".join(out))
        self.assertIn("rendezvous authenticated: every rank holds the job's token", out[0])
        stale_code = wait_all(stale, timeout=60)[0]
        stale_out = read_output(self.tmp, "stale", 1)
        self.assertNotEqual(stale_code, 0, stale_out)
        self.assertIn("(rank 1 of 2, attempt 0)", stale_out)
        self.assertNotIn("rendezvous authentication", stale_out, "it took part in attempt 1's")
        self.assertNotIn("Epoch(train)", stale_out)


if __name__ == "__main__":
    unittest.main()
