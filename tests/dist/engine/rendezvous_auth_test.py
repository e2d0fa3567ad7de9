"""The authenticated rendezvous between real ranks over Gloo on loopback: ranks that share
DDP3D_RENDEZVOUS_TOKEN train; a rank with another token, or none, is refused and every rank
exits naming it; a malformed token fails before any rendezvous, without printing it.
"""
import os
import shutil
import subprocess
import tempfile
import unittest

from toy_training_test import BINARY, CONFIG, WORLD, free_port, read_output, wait_all

TOKEN = "0f3c9a7e5b1d4c2a8e6f0b9d7c5a3e1f"


def start(tokens, log_dir, tag, extra=()):
    """One rank per entry of `tokens` (None: the variable is unset for that rank)."""
    port = free_port()
    procs = []
    for rank, token in enumerate(tokens):
        env = {k: v for k, v in os.environ.items() if k != "DDP3D_RENDEZVOUS_TOKEN"}
        env.update(RANK=str(rank), WORLD_SIZE=str(WORLD), LOCAL_RANK=str(rank),
                   LOCAL_WORLD_SIZE=str(WORLD), GROUP_RANK="0", MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=str(port), OMP_NUM_THREADS="1")
        if token is not None:
            env["DDP3D_RENDEZVOUS_TOKEN"] = token
        with open(os.path.join(log_dir, "%s_rank%d.txt" % (tag, rank)), "w") as out:
            procs.append(subprocess.Popen(
                [BINARY, "train", CONFIG, "--launcher", "pytorch", "--work-dir",
                 os.path.join(log_dir, tag), "--cfg-options", "env_cfg.dist_cfg.timeout=30"]
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


if __name__ == "__main__":
    unittest.main()
