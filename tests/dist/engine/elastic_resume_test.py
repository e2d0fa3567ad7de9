"""A run checkpointed at 3 ranks and resumed at 2 (or 1) with DDP3D_BATCH_WORLD_SIZE=3 keeps
the global batch: every later iteration trains exactly the samples the uninterrupted 3-rank run
trained (DDP3D_SAMPLE_TRACE), in micro-batches, on the same loss curve, to the same model.

Ranks are started with the launcher's environment contract over Gloo on loopback.
"""
import collections
import glob
import json
import os
import shutil
import tempfile
import time
import unittest

# The ranks are started as the toy training test starts them.
from toy_training_test import read_output, run_dirs, start_ranks, wait_all

# Checkpoints every 10 iterations; the toy's 1024 samples are 22 iterations of 48 per epoch at
# 3 ranks × batch_size 16, so iteration 30 lies inside epoch 2.
COMMON = ["--cfg-options", "default_hooks.checkpoint.by_epoch=false",
          "default_hooks.checkpoint.interval=10", "default_hooks.checkpoint.max_keep_ckpts=-1",
          "default_hooks.logger.interval=1"]
RESUME_AT = 30


def run(world, args, log_dir, tag, extra_env=None, timeout=180):
    """Runs `world` ranks to the end; returns their exit codes."""
    return wait_all(start_ranks(args, log_dir, tag, world, extra_env), timeout)


def scalars(work_dir):
    with open(os.path.join(run_dirs(work_dir)[-1], "vis_data", "scalars.json")) as f:
        records = [json.loads(line) for line in f if line.strip()]
    train = {r["iter"]: r for r in records if "lr" in r}
    val = [r["mse"] for r in records if "mse" in r]
    return train, val


def traced_iterations(trace_dir):
    """{global iter: (sorted samples of every rank, micro-batches per rank, world size)}."""
    samples = collections.defaultdict(list)
    micro = collections.defaultdict(set)
    worlds = collections.defaultdict(set)
    for path in glob.glob(os.path.join(trace_dir, "samples_rank*.jsonl")):
        with open(path) as f:
            for line in f:
                r = json.loads(line)
                samples[r["iter"]].extend(r["samples"])
                micro[r["iter"]].add(r["micro_batches"])
                worlds[r["iter"]].add(r["world_size"])
    return {i: (sorted(samples[i]), micro[i], worlds[i]) for i in samples}


class ElasticResume(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="ddp3d_elastic_")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_a_run_resumed_on_fewer_ranks_trains_the_same_samples_on_the_same_curve(self):
        ref_dir = os.path.join(self.tmp, "ref")
        ref_trace = os.path.join(self.tmp, "ref_trace")
        codes = run(3, ["--work-dir", ref_dir] + COMMON, self.tmp, "ref",
                    {"DDP3D_SAMPLE_TRACE": ref_trace})
        self.assertEqual(codes, [0, 0, 0], read_output(self.tmp, "ref"))
        ref_train, ref_val = scalars(ref_dir)
        ref_iters = traced_iterations(ref_trace)
        total = max(ref_train)
        self.assertEqual(total, 6 * 22)
        self.assertEqual(sorted(ref_iters), list(range(1, total + 1)))
        # At full size one batch per rank: 48 samples an iteration, 18 in an epoch's last.
        self.assertEqual(ref_iters[1][1], {1})
        self.assertEqual(len(ref_iters[1][0]), 48)
        self.assertEqual(len(ref_iters[22][0]), 18)

        for world in (2, 1):
            tag = "w%d" % world
            work = os.path.join(self.tmp, tag)
            trace = os.path.join(self.tmp, tag + "_trace")
            os.makedirs(work)
            shutil.copy(os.path.join(ref_dir, "iter_%d.pth" % RESUME_AT), work)
            codes = run(world, ["--work-dir", work, "--resume", "auto"] + COMMON, self.tmp, tag,
                        {"DDP3D_SAMPLE_TRACE": trace, "DDP3D_BATCH_WORLD_SIZE": "3"})
            out = read_output(self.tmp, tag)
            self.assertEqual(codes, [0] * world, out)
            self.assertIn("(global batch defined at 3, DDP3D_BATCH_WORLD_SIZE)", out)
            self.assertIn("resumed from %s" % os.path.join(work, "iter_%d.pth" % RESUME_AT), out)
            self.assertIn("written at world size 3 at world size %d: global batch 48 kept, %d ranks "
                          "accumulate micro-batches" % (world, world), out)
            self.assertNotIn("the data order differs", out)

            # The same samples, iteration by iteration: none repeated, none skipped.
            iters = traced_iterations(trace)
            self.assertEqual(sorted(iters), list(range(RESUME_AT + 1, total + 1)))
            for i, (samples, micro, worlds) in iters.items():
                self.assertEqual(samples, ref_iters[i][0], "iteration %d at world size %d" % (i, world))
                self.assertEqual(worlds, {world})
                # 48 samples (an epoch's last: 18) over `world` ranks, at most 16 at a time.
                share = -(-(18 if i % 22 == 0 else 48) // world)
                expected_micro = -(-share // 16)
                self.assertEqual(micro, {expected_micro}, "iteration %d" % i)

            # The same curve and the same model: the per-iteration loss (mean over ranks) and
            # the validation MSE agree up to float summation order.
            train, val = scalars(work)
            self.assertEqual(sorted(train), list(range(RESUME_AT + 1, total + 1)))
            worst = 0.0
            for i, r in train.items():
                self.assertAlmostEqual(r["lr"], ref_train[i]["lr"], places=12)
                worst = max(worst, abs(r["loss"] - ref_train[i]["loss"]) /
                            max(1e-12, abs(ref_train[i]["loss"])))
            val_diff = abs(val[-1] - ref_val[-1]) / ref_val[-1]
            print("resumed at iteration %d of %d on %d rank(s): max relative loss difference "
                  "%.3g, final val mse %.6g vs %.6g (relative %.3g)"
                  % (RESUME_AT, total, world, worst, val[-1], ref_val[-1], val_diff))
            self.assertLess(worst, 1e-5)
            self.assertLess(val_diff, 1e-5)

    def test_a_run_resumed_without_the_batch_world_size_warns_that_the_order_differs(self):
        # The contrast: 2 ranks without DDP3D_BATCH_WORLD_SIZE train a global batch of 32.
        ref_dir = os.path.join(self.tmp, "ref")
        self.assertEqual(run(3, ["--work-dir", ref_dir] + COMMON + ["train_cfg.max_epochs=2"],
                             self.tmp, "ref"), [0, 0, 0], read_output(self.tmp, "ref"))
        work = os.path.join(self.tmp, "w2")
        os.makedirs(work)
        shutil.copy(os.path.join(ref_dir, "iter_%d.pth" % RESUME_AT), work)
        codes = run(2, ["--work-dir", work, "--resume", "auto"] + COMMON + ["train_cfg.max_epochs=2"],
                    self.tmp, "w2")
        out = read_output(self.tmp, "w2")
        self.assertEqual(codes, [0, 0], out)
        self.assertIn("the checkpoint was written with a global batch of 48 (3 ranks × batch_size "
                      "16), resuming with 32 (2 × 16): the data order differs", out)

    def test_a_world_larger_than_the_batch_world_fails_before_the_rendezvous(self):
        start = time.time()
        codes = run(2, ["--work-dir", os.path.join(self.tmp, "bad")] + COMMON, self.tmp, "bad",
                    {"DDP3D_BATCH_WORLD_SIZE": "1"}, timeout=60)
        outs = [read_output(self.tmp, "bad", rank) for rank in range(2)]
        self.assertEqual(codes, [1, 1], outs)
        for out in outs:
            self.assertIn("DDP3D_BATCH_WORLD_SIZE=1 is smaller than the world size 2", out)
        self.assertLess(time.time() - start, 30)


if __name__ == "__main__":
    unittest.main(verbosity=2)
