"""Multi-process training of the toy config over Gloo: the loss falls, and a run killed after
epoch 2 resumes with --resume auto on the same loss curve as an uninterrupted run.

Ranks are started the way `ddp3d launch` starts them (RANK, WORLD_SIZE, LOCAL_RANK,
LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT), so SIGKILL can hit every rank at once.
"""
import glob
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import unittest

BINARY = os.path.join(os.environ["DDP3D_BINARY_DIR"], "worker", "ddp3d")
CONFIG = os.path.join(os.environ["DDP3D_SOURCE_DIR"], "configs", "toy", "toy_regression_2proc.yaml")
ITER_CONFIG = os.path.join(os.environ["DDP3D_SOURCE_DIR"], "configs", "toy", "toy_regression_iter_2proc.yaml")
WORLD = 2


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_ranks(args, log_dir, tag, world=WORLD, extra_env=None, config=CONFIG):
    """Starts `world` ranks with `args`, or with `args(rank)` when it is a function (per-rank
    work dirs), and `extra_env` added to this process's environment."""
    rank_args = args if callable(args) else (lambda rank: args)
    port = free_port()
    procs = []
    for rank in range(world):
        env = {k: v for k, v in os.environ.items()
               if k not in ("DDP3D_BATCH_WORLD_SIZE", "DDP3D_SAMPLE_TRACE")}
        env.update(RANK=str(rank), WORLD_SIZE=str(world), LOCAL_RANK=str(rank),
                   LOCAL_WORLD_SIZE=str(world), GROUP_RANK="0", MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=str(port), OMP_NUM_THREADS="1", **(extra_env or {}))
        with open(os.path.join(log_dir, "%s_rank%d.txt" % (tag, rank)), "w") as out:
            procs.append(subprocess.Popen([BINARY, "train", config, "--launcher", "pytorch"] + rank_args(rank),
                                          env=env, stdout=out, stderr=subprocess.STDOUT,
                                          start_new_session=True))
    return procs


def wait_all(procs, timeout=120):
    deadline = time.time() + timeout
    codes = []
    for p in procs:
        try:
            codes.append(p.wait(timeout=max(1, deadline - time.time())))
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            raise
    return codes


def read_output(log_dir, tag, rank=0):
    with open(os.path.join(log_dir, "%s_rank%d.txt" % (tag, rank))) as f:
        return f.read()


def train_records(run_dir):
    with open(os.path.join(run_dir, "vis_data", "scalars.json")) as f:
        records = [json.loads(line) for line in f if line.strip()]
    return [r for r in records if "lr" in r]


def run_dirs(work_dir):
    # Oldest first; a run started in the same second as the previous one gets "<stamp>_1".
    return sorted((d for d in glob.glob(os.path.join(work_dir, "2*")) if os.path.isdir(d)),
                  key=os.path.getctime)


class ToyTraining(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="ddp3d_engine_dist_")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_two_process_run_loss_falls(self):
        work = os.path.join(self.tmp, "work")
        codes = wait_all(start_ranks(["--work-dir", work], self.tmp, "toy"))
        out = read_output(self.tmp, "toy")
        self.assertEqual(codes, [0, 0], out)
        self.assertIn("world size 2", out)
        self.assertIn("backend gloo", out)
        # Each rank's first line says where it runs (this build and config: CPU over Gloo).
        for rank in range(WORLD):
            first = read_output(self.tmp, "toy", rank).splitlines()[0]
            self.assertRegex(first, r"\[rank %d\] INFO - rank %d/2: CPU \((no CUDA in this build|GPUS=0)\), "
                                    r"2 processes over Gloo$" % (rank, rank))
        records = train_records(run_dirs(work)[-1])
        first, last = records[0]["loss"], records[-1]["loss"]
        print("toy loss: first logged %.5f, last logged %.5f, %d records" % (first, last, len(records)))
        self.assertLess(last, 0.2 * first)
        self.assertEqual(records[-1]["epoch"], 6)
        # Validation on rank 0 over the whole val set (both ranks' shards, padding dropped).
        with open(os.path.join(run_dirs(work)[-1], "vis_data", "scalars.json")) as f:
            vals = [json.loads(line) for line in f if '"mse"' in line]
        self.assertEqual([v["epoch"] for v in vals], [2, 4, 6])
        self.assertTrue(all(v["count"] == 256 for v in vals))
        self.assertLess(vals[-1]["mse"], vals[0]["mse"])
        # max_keep_ckpts: 2, the merged config dumped, last_checkpoint written.
        self.assertEqual(sorted(os.path.basename(p) for p in glob.glob(os.path.join(work, "epoch_*.pth"))),
                         ["epoch_5.pth", "epoch_6.pth"])
        self.assertTrue(os.path.exists(os.path.join(work, "toy_regression_2proc.yaml")))
        with open(os.path.join(work, "last_checkpoint")) as f:
            self.assertTrue(f.read().endswith("epoch_6.pth"))
        # Rank 0 alone writes the human log.
        logs = glob.glob(os.path.join(run_dirs(work)[-1], "*.log"))
        self.assertEqual(len(logs), 1)
        with open(logs[0]) as f:
            self.assertIn("Epoch(train) [6]", f.read())

    def test_save_best_keeps_the_checkpoint_of_the_lowest_validation_mse(self):
        work = os.path.join(self.tmp, "work")
        codes = wait_all(start_ranks(["--work-dir", work, "--cfg-options",
                                      "default_hooks.checkpoint.save_best=auto"], self.tmp, "best"))
        out = read_output(self.tmp, "best")
        self.assertEqual(codes, [0, 0], out)
        with open(os.path.join(run_dirs(work)[-1], "vis_data", "scalars.json")) as f:
            vals = [json.loads(line) for line in f if '"mse"' in line]
        best = min(vals, key=lambda v: v["mse"])  # the toy's key metric: lower is better
        self.assertEqual([os.path.basename(p) for p in glob.glob(os.path.join(work, "best_*.pth"))],
                         ["best_mse_epoch_%d.pth" % best["epoch"]], out)
        self.assertIn("saved best checkpoint", out)
        # Not a resume point: last_checkpoint still names the newest epoch checkpoint.
        with open(os.path.join(work, "last_checkpoint")) as f:
            self.assertTrue(f.read().endswith("epoch_6.pth"))

        # Resumed (from epoch 6, trained on to 8): the next validation compares with the best
        # before the resume, which travelled in epoch_6.pth.
        codes = wait_all(start_ranks(["--work-dir", work, "--resume", "--cfg-options",
                                      "default_hooks.checkpoint.save_best=auto",
                                      "train_cfg.max_epochs=8"], self.tmp, "resumed"))
        out = read_output(self.tmp, "resumed")
        self.assertEqual(codes, [0, 0], out)
        self.assertIn("resumed from", out)
        with open(os.path.join(run_dirs(work)[-1], "vis_data", "scalars.json")) as f:
            after = [json.loads(line) for line in f if '"mse"' in line]
        self.assertEqual([v["epoch"] for v in after], [8])
        if after[0]["mse"] < best["mse"]:
            self.assertIn("best before: %.6f" % best["mse"], out)
            expected = "best_mse_epoch_8.pth"
        else:
            self.assertNotIn("save_best:", out)
            expected = "best_mse_epoch_%d.pth" % best["epoch"]
        self.assertEqual([os.path.basename(p) for p in glob.glob(os.path.join(work, "best_*.pth"))],
                         [expected], out)

    def test_a_work_dir_that_cannot_be_written_fails_before_the_rendezvous(self):
        """Rank 0 alone of a world of 2: had it reached the rendezvous it would wait there for
        rank 1; it must fail first, naming the key and the path."""
        blocker = os.path.join(self.tmp, "a_file")
        with open(blocker, "w") as f:
            f.write("not a folder")
        work = os.path.join(self.tmp, "tb_blocked")
        os.makedirs(work)
        with open(os.path.join(work, "tensorboard"), "w") as f:
            f.write("not a folder")
        cases = {"nodir": ["--work-dir", os.path.join(blocker, "work")],
                 "notb": ["--work-dir", work, "--cfg-options",
                          "visualizer.vis_backends=[{type: TensorboardVisBackend}]"]}
        for tag, args in cases.items():
            start = time.time()
            procs = start_ranks(lambda rank: args, self.tmp, tag, world=2)
            procs[1].kill()  # rank 1 never joins
            procs[1].wait()
            codes = wait_all(procs[:1], timeout=60)
            out = read_output(self.tmp, tag)
            self.assertEqual(codes, [2], out)  # a config error's exit code
            self.assertIn("work_dir: cannot write", out)
            self.assertIn(os.path.join(blocker, "work") if tag == "nodir"
                          else os.path.join(work, "tensorboard"), out)
            self.assertNotIn("rendezvous at", out)
            self.assertLess(time.time() - start, 30)

    def test_ema_validates_the_average_and_a_resume_continues_it_exactly(self):
        ema = ["--cfg-options", "custom_hooks=[{type: EMAHook, momentum: 0.1}]"]

        def run(tag, args):
            codes = wait_all(start_ranks(args, self.tmp, tag))
            self.assertEqual(codes, [0, 0], read_output(self.tmp, tag))

        def last(work, key):
            with open(os.path.join(run_dirs(work)[-1], "vis_data", "scalars.json")) as f:
                return [json.loads(line) for line in f if '"%s"' % key in line][-1]

        plain, whole, split = (os.path.join(self.tmp, d) for d in ("plain", "whole", "split"))
        run("plain", ["--work-dir", plain])
        run("whole", ["--work-dir", whole] + ema)
        # The average is what validation sees: not the trained weights' mse.
        self.assertNotEqual(last(whole, "mse")["mse"], last(plain, "mse")["mse"])
        # The checkpoint holds the average as the model: `ddp3d test` on the validation data
        # gets the last validation's mse back.
        test = subprocess.run(
            [BINARY, "test", CONFIG, os.path.join(whole, "epoch_6.pth"), "--work-dir",
             os.path.join(self.tmp, "tested"),
             "--cfg-options", "test_evaluator={type: RegressionMetric}",
             "test_dataloader={batch_size: 64, dataset: {type: SyntheticRegression, "
             "num_samples: 256, test_mode: true}}"],
            capture_output=True, text=True, timeout=120, env=dict(os.environ, OMP_NUM_THREADS="1"))
        self.assertEqual(test.returncode, 0, test.stdout + test.stderr)
        with open(os.path.join(self.tmp, "tested", "test_metrics.json")) as f:
            tested = json.load(f)["metrics"]["mse"]
        self.assertAlmostEqual(tested, last(whole, "mse")["mse"], places=9)
        # Stopped after epoch 4 and resumed: the same losses and the same validation.
        run("first", ["--work-dir", split] + ema + ["train_cfg.max_epochs=4"])
        run("second", ["--work-dir", split, "--resume"] + ema)
        self.assertIn("resumed from", read_output(self.tmp, "second"))
        self.assertEqual(last(split, "mse"), last(whole, "mse"))
        self.assertEqual(last(split, "loss")["loss"], last(whole, "loss")["loss"])

    def test_an_iteration_loop_validates_mid_epoch_and_resumes_exactly(self):
        # configs/toy/toy_regression_iter_2proc.yaml: 80 iterations of 32 per pass, validation
        # and checkpoints every 30 iterations and at the end.
        def run(tag, args):
            procs = start_ranks(args, self.tmp, tag, config=ITER_CONFIG)
            self.assertEqual(wait_all(procs), [0, 0], read_output(self.tmp, tag))

        def records(work):
            with open(os.path.join(run_dirs(work)[-1], "vis_data", "scalars.json")) as f:
                lines = [json.loads(line) for line in f if line.strip()]
            return [r for r in lines if "lr" in r], [r for r in lines if "mse" in r]

        whole = os.path.join(self.tmp, "whole")
        run("whole", ["--work-dir", whole, "--cfg-options", "default_hooks.checkpoint.save_best=auto"])
        train, vals = records(whole)
        print("iteration loop: validations at %s, mse %s" % ([v["step"] for v in vals],
                                                            [round(v["mse"], 6) for v in vals]))
        self.assertEqual([v["step"] for v in vals], [30, 60, 80])
        self.assertEqual(train[-1]["iter"], 80)
        self.assertLess(vals[-1]["mse"], vals[0]["mse"])
        self.assertEqual(sorted(os.path.basename(p) for p in glob.glob(os.path.join(whole, "*.pth"))),
                         sorted(["iter_30.pth", "iter_60.pth", "iter_80.pth",
                                 "best_mse_iter_%d.pth" % min(vals, key=lambda v: v["mse"])["step"]]))
        # Resumed from iter_30.pth, inside the first pass and after its validation: the same
        # losses and validations from there on, and no second validation at 30.
        split = os.path.join(self.tmp, "split")
        os.makedirs(split)
        shutil.copy(os.path.join(whole, "iter_30.pth"), split)
        run("resumed", ["--work-dir", split, "--resume"])
        self.assertIn("resumed from %s" % os.path.join(split, "iter_30.pth"), read_output(self.tmp, "resumed"))
        train2, vals2 = records(split)
        self.assertEqual([r["iter"] for r in train2], [r["iter"] for r in train if r["iter"] > 30])
        self.assertEqual([r["loss"] for r in train2], [r["loss"] for r in train if r["iter"] > 30])
        self.assertEqual([(v["step"], v["mse"]) for v in vals2], [(v["step"], v["mse"]) for v in vals[1:]])

    def test_accumulation_equals_the_bigger_batch(self):
        # Per rank: 2 micro-batches of 8 accumulated (the first under DDP no_sync) give the same
        # training as one batch of 16 (loss divisor, step timing, averaging all right).
        flat = ["param_scheduler=[]"]  # the warm-up counts iterations, which differ here
        results = {}
        for tag, extra in (("big", ["train_dataloader.batch_size=16"]),
                           ("accum", ["train_dataloader.batch_size=8",
                                      "optim_wrapper.accumulative_counts=2"])):
            work = os.path.join(self.tmp, tag)
            codes = wait_all(start_ranks(["--work-dir", work, "--cfg-options"] + flat + extra,
                                         self.tmp, tag))
            self.assertEqual(codes, [0, 0], read_output(self.tmp, tag))
            with open(os.path.join(run_dirs(work)[-1], "vis_data", "scalars.json")) as f:
                results[tag] = [json.loads(line)["mse"] for line in f if '"mse"' in line]
        print("val mse, batch 16: %s; 2 x 8 accumulated: %s" % (results["big"], results["accum"]))
        self.assertEqual(len(results["big"]), 3)
        for a, b in zip(results["big"], results["accum"]):
            self.assertLess(abs(a - b) / a, 1e-4)
        self.assertLess(results["accum"][-1], results["accum"][0])

    def test_killed_run_resumes_on_the_same_curve(self):
        # More samples per epoch so that the kill lands mid-training.
        common = ["--cfg-options", "train_dataloader.dataset.num_samples=4096",
                  "default_hooks.checkpoint.max_keep_ckpts=-1"]
        ref_dir = os.path.join(self.tmp, "ref")
        self.assertEqual(wait_all(start_ranks(["--work-dir", ref_dir] + common, self.tmp, "ref")), [0, 0],
                         read_output(self.tmp, "ref"))
        reference = {(r["epoch"], r["iter"]): r for r in train_records(run_dirs(ref_dir)[-1])}

        work = os.path.join(self.tmp, "killed")
        procs = start_ranks(["--work-dir", work] + common, self.tmp, "killed")
        deadline = time.time() + 120
        while not os.path.exists(os.path.join(work, "epoch_2.pth")):
            self.assertLess(time.time(), deadline, "no epoch_2.pth")
            self.assertTrue(all(p.poll() is None for p in procs), read_output(self.tmp, "killed"))
            time.sleep(0.005)
        for p in procs:
            os.killpg(p.pid, signal.SIGKILL)
        for p in procs:
            p.wait()
        saved = sorted(int(os.path.basename(p)[6:-4]) for p in glob.glob(os.path.join(work, "epoch_*.pth")))
        self.assertLess(saved[-1], 6, "the run finished before the kill; the test proves nothing")

        codes = wait_all(start_ranks(["--work-dir", work, "--resume", "auto"] + common, self.tmp, "resumed"))
        out = read_output(self.tmp, "resumed")
        self.assertEqual(codes, [0, 0], out)
        self.assertIn("resumed from %s" % os.path.join(work, "epoch_%d.pth" % saved[-1]), out)
        resumed = train_records(run_dirs(work)[-1])
        self.assertEqual(resumed[0]["epoch"], saved[-1] + 1)
        self.assertEqual(resumed[-1]["epoch"], 6)
        worst = 0.0
        for r in resumed:
            ref = reference[(r["epoch"], r["iter"])]
            self.assertAlmostEqual(r["lr"], ref["lr"], places=12)
            worst = max(worst, abs(r["loss"] - ref["loss"]) / max(1e-12, abs(ref["loss"])))
        print("resumed at epoch %d: %d records, max relative loss difference %.3g"
              % (saved[-1] + 1, len(resumed), worst))
        self.assertLess(worst, 1e-6)

    def test_iteration_and_timed_checkpoints_resume_on_the_same_curve(self):
        # Every 10 iterations (not at epoch ends), plus the end; then a resume from one of them
        # continues mid-epoch on the reference curve.
        common = ["--cfg-options", "default_hooks.checkpoint.by_epoch=false",
                  "default_hooks.checkpoint.interval=10", "default_hooks.checkpoint.max_keep_ckpts=-1",
                  "default_hooks.logger.interval=1"]
        work = os.path.join(self.tmp, "iters")
        self.assertEqual(wait_all(start_ranks(["--work-dir", work] + common, self.tmp, "iters")), [0, 0],
                         read_output(self.tmp, "iters"))
        reference = {(r["epoch"], r["iter"]): r for r in train_records(run_dirs(work)[-1])}
        saved = sorted(int(os.path.basename(p)[5:-4]) for p in glob.glob(os.path.join(work, "iter_*.pth")))
        total = len(reference)
        self.assertEqual(glob.glob(os.path.join(work, "epoch_*.pth")), [])
        self.assertEqual(saved, list(range(10, total, 10)) + ([total] if total % 10 else []), saved)
        # Resume from one that lies inside an epoch: drop the newer ones.
        per_epoch = total // 6
        mid = next(n for n in saved if n % per_epoch and n > per_epoch)
        for n in saved:
            if n > mid:
                os.remove(os.path.join(work, "iter_%d.pth" % n))
        os.remove(os.path.join(work, "last_checkpoint"))
        codes = wait_all(start_ranks(["--work-dir", work, "--resume", "auto"] + common, self.tmp, "again"))
        out = read_output(self.tmp, "again")
        self.assertEqual(codes, [0, 0], out)
        self.assertIn("resumed from %s" % os.path.join(work, "iter_%d.pth" % mid), out)
        resumed = train_records(run_dirs(work)[-1])
        self.assertEqual(len(resumed), total - mid)
        worst = max(abs(r["loss"] - reference[(r["epoch"], r["iter"])]["loss"]) /
                    max(1e-12, abs(reference[(r["epoch"], r["iter"])]["loss"])) for r in resumed)
        print("iteration checkpoints %s; resumed at iteration %d of %d: max relative loss difference %.3g"
              % (saved, mid, total, worst))
        self.assertLess(worst, 1e-6)

        # By time: both ranks agree on the iterations (a disagreement would desynchronise their
        # collectives), and checkpoints appear between epoch ends.
        timed = os.path.join(self.tmp, "timed")
        codes = wait_all(start_ranks(["--work-dir", timed, "--cfg-options",
                                      "default_hooks.checkpoint.interval_seconds=0.2",
                                      "default_hooks.checkpoint.max_keep_ckpts=-1",
                                      "train_dataloader.dataset.num_samples=4096"], self.tmp, "timed"))
        self.assertEqual(codes, [0, 0], read_output(self.tmp, "timed"))
        timed_iters = glob.glob(os.path.join(timed, "iter_*.pth"))
        print("timed checkpoints: %d iteration ones beside %d epoch ones"
              % (len(timed_iters), len(glob.glob(os.path.join(timed, "epoch_*.pth")))))
        self.assertGreater(len(timed_iters), 0, read_output(self.tmp, "timed"))

    # A learning rate of 1e30 sends the toy's weights to inf within a few steps, on both ranks.
    DIVERGE = ["optim_wrapper.optimizer.lr=1e30", "optim_wrapper.optimizer.momentum=0",
               "optim_wrapper.clip_grad=null", "param_scheduler=[]",
               "default_hooks.logger.interval=1"]

    def test_a_non_finite_loss_stops_every_rank_naming_it(self):
        work = os.path.join(self.tmp, "nan")
        codes = wait_all(start_ranks(["--work-dir", work, "--cfg-options"] + self.DIVERGE,
                                     self.tmp, "nan"))
        outs = [read_output(self.tmp, "nan", rank) for rank in range(WORLD)]
        self.assertEqual(codes, [1, 1], outs)
        for out in outs:
            self.assertRegex(out, r"non-finite loss at epoch 1, iteration \d+ \(global \d+\) — "
                                  r"rank 0: loss=(nan|inf)")
            self.assertIn("; rank 1: loss=", out)
            self.assertIn("training stopped", out)
        # It stopped at the first bad iteration: no record after it trains on garbage, and no
        # checkpoint of the poisoned weights is written.
        records = train_records(run_dirs(work)[-1])
        self.assertTrue(all(r["loss"] == r["loss"] and abs(r["loss"]) != float("inf")
                            for r in records), records)
        self.assertEqual(glob.glob(os.path.join(work, "*.pth")), [])

    def test_skipped_non_finite_losses_are_counted_then_stop_at_max_skips(self):
        work = os.path.join(self.tmp, "skip")
        args = self.DIVERGE + ["default_hooks.check_invalid_loss.on_invalid=skip",
                               "default_hooks.check_invalid_loss.max_skips=3"]
        codes = wait_all(start_ranks(["--work-dir", work, "--cfg-options"] + args, self.tmp,
                                     "skip"))
        outs = [read_output(self.tmp, "skip", rank) for rank in range(WORLD)]
        self.assertEqual(codes, [1, 1], outs)
        for n in (1, 2, 3):  # rank 0 logs for the group
            self.assertIn("iteration skipped (%d of at most 3" % n, outs[0])
        for out in outs:
            self.assertIn("more than default_hooks.check_invalid_loss.max_skips=3 iterations "
                          "skipped", out)


if __name__ == "__main__":
    unittest.main(verbosity=2)
