"""The real `ddp3d` binary fed hostile input: unchecked CLI numbers, configs that are FIFOs,
devices, alias bombs or deep nests, loader thread counts past what can be started, a full disk
during `data synth-kitti`, `--work-dir null`, and stray checkpoint names under `--resume auto`.

Every run has a deadline and an address-space limit, so a hang or an unbounded allocation fails
the test instead of the machine; each must end with a clear error naming the flag or the file,
with an exit code (not a signal).
"""
import os
import resource
import signal
import subprocess
import tempfile
import unittest

BINARY = os.path.join(os.environ["DDP3D_BINARY_DIR"], "worker", "ddp3d")
TOY_CONFIG = os.path.join(os.environ["DDP3D_SOURCE_DIR"], "configs", "toy",
                          "toy_regression_2proc.yaml")
ADDRESS_SPACE = 16 << 30  # LibTorch maps a lot at start; a runaway allocation still hits it


def run(args, cwd=None, timeout=60, file_size=None, thread_stack=None):
    def limits():
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))
        if thread_stack is not None:
            # glibc gives each new thread a stack of RLIMIT_STACK bytes: with large ones the
            # address-space limit runs out after a few threads (RLIMIT_NPROC does not bind root).
            resource.setrlimit(resource.RLIMIT_STACK, (thread_stack, thread_stack))
        if file_size is not None:
            # A full disk: write() fails with EFBIG instead of the process dying of SIGXFSZ.
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_size, file_size))
    env = dict(os.environ, OMP_NUM_THREADS="1")
    p = subprocess.run([BINARY] + args, cwd=cwd, env=env, capture_output=True, text=True,
                       timeout=timeout, preexec_fn=limits)
    return p.returncode, p.stdout + p.stderr


class HostileCli(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="ddp3d-hostile-cli-")
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.dir, name)

    def write(self, name, text):
        with open(self.path(name), "w") as f:
            f.write(text)
        return self.path(name)

    def test_synth_kitti_numbers_are_checked_whole_and_in_range(self):
        cases = [("--scenes", v) for v in ["nan", "-1", "0", "1e9", "12abc", "99999999999999999999",
                                           "", " 3", "1000000"]]
        cases += [("--val-fraction", v) for v in ["nan", "inf", "-0.5", "1", "0.2x"]]
        cases += [("--azimuth-step", v) for v in ["0", "-1", "inf", "nan", "1e300"]]
        cases += [("--beams", v) for v in ["-5", "0", "100000", "64.5"]]
        cases += [("--seed", v) for v in ["-1", "18446744073709551616", "7x"]]
        out = self.path("out")
        for flag, value in cases:
            code, text = run(["data", "synth-kitti", out, flag, value])
            self.assertEqual(code, 2, "%s %r: %s" % (flag, value, text))
            # Each refusal names the flag: "expected ..." for what does not parse, the bound for
            # what parses but is out of range ("--val-fraction: must be below 1").
            self.assertIn("ddp3d data: " + flag + ": ", text, "%s %r" % (flag, value))
        self.assertFalse(os.path.exists(out), "a rejected command wrote data")

    def test_check_dist_numbers_are_checked(self):
        for flag, value in [("--timeout", "nan"), ("--timeout", "-1"), ("--timeout", "1e300"),
                            ("--timeout", "5s"), ("--elements", "0"), ("--elements", "1e3")]:
            code, text = run(["check-dist", flag, value])
            self.assertEqual(code, 2, "%s %r: %s" % (flag, value, text))
            self.assertIn(flag + ": expected", text)

    def test_train_seed_must_be_a_whole_non_negative_integer(self):
        for value in ["-1", "nan", "1e3", "99999999999999999999", " 5"]:
            code, text = run(["train", TOY_CONFIG, "--seed", value])
            self.assertEqual(code, 2, "%r: %s" % (value, text))
            self.assertIn("--seed: expected", text)

    def assert_config_error(self, config, expect):
        code, text = run(["train", config], timeout=30)
        self.assertEqual(code, 2, text)
        self.assertIn(expect, text)

    def test_configs_that_are_not_regular_files_fail_at_once(self):
        fifo = self.path("pipe.yaml")
        os.mkfifo(fifo)
        self.assert_config_error(fifo, fifo + ": config file is a FIFO")
        self.assert_config_error("/dev/zero", "/dev/zero: config file is a character device")
        self.assert_config_error(self.dir, "config file is a directory")
        sparse = self.path("huge.yaml")
        with open(sparse, "w") as f:
            f.truncate(1 << 40)
        self.assert_config_error(sparse, "huge.yaml: config file is 1099511627776 bytes")

    def test_alias_bombs_deep_nests_and_long_numbers_are_config_errors(self):
        bomb = "l0: &l0 [lol]\n" + "".join(
            "l%d: &l%d [%s]\n" % (i, i, ", ".join(["*l%d" % (i - 1)] * 10)) for i in range(1, 10))
        self.assert_config_error(self.write("bomb.yaml", bomb),
                                 "values once YAML aliases are expanded")
        self.assert_config_error(self.write("cycle.yaml", "a: &a [1, *a]\n"), "cycle.yaml:")
        self.assert_config_error(self.write("deep.yaml", "a: " + "[" * 100000 + "]" * 100000),
                                 "deep.yaml:1")
        code, text = run(["train", TOY_CONFIG, "--cfg-options",
                          # 100 000 digits: one argv string may not exceed 128 KiB (Linux).
                          "optim_wrapper.optimizer.lr=" + "9" * 100000])
        self.assertEqual(code, 2, text[-2000:])
        self.assertIn("optim_wrapper.optimizer.lr: expected a number", text)
        code, text = run(["train", TOY_CONFIG, "--cfg-options", "optim_wrapper.optimizer.lr=.nan"])
        self.assertEqual(code, 2, text)
        self.assertIn("must be a finite number", text)

    def test_loader_threads_are_bounded_and_failing_to_start_them_is_an_error(self):
        # An absurd count is a config error before any thread, session or work dir.
        config = self.write("workers.yaml",
                            "_base_: %s\ntrain_dataloader: {num_workers: 100000}\n" % TOY_CONFIG)
        code, text = run(["train", config], cwd=self.dir, timeout=30)
        self.assertEqual(code, 2, text)
        self.assertIn("workers.yaml:2: train_dataloader.num_workers: must be <= 1024, got 100000",
                      text)
        self.assertFalse(os.path.exists(self.path("work_dirs")), os.listdir(self.dir))
        # An allowed count the process cannot start: an error naming the key, never
        # std::terminate ("terminate called without an active exception", SIGABRT).
        code, text = run(["train", TOY_CONFIG, "--work-dir", self.path("work"), "--cfg-options",
                          "train_dataloader.num_workers=1000", "train_cfg.max_epochs=1"],
                         timeout=120, thread_stack=1 << 30)
        self.assertEqual(code, 1, text[-3000:])
        self.assertIn("train_dataloader.num_workers = 1000: could not start loader thread", text)
        self.assertNotIn("terminate called", text)

    def test_a_full_disk_leaves_no_empty_file_in_place(self):
        out = self.path("kitti")
        code, text = run(["data", "synth-kitti", out, "--scenes", "20"], file_size=256 << 10)
        self.assertEqual(code, 1, text)
        self.assertIn("write failed", text)
        for root, _, files in os.walk(out):
            for name in files:
                full = os.path.join(root, name)
                self.assertNotIn(".tmp", name, "temp file left: " + full)
                size = os.path.getsize(full)
                self.assertGreater(size, 0, "empty file renamed into place: " + full)
                if name.endswith(".bin"):
                    self.assertEqual(size % 16, 0, "partial scan: " + full)

    def test_work_dir_is_a_path_never_yaml(self):
        for name in ["null", "123", "a,b", "[x]"]:
            code, text = run(["train", TOY_CONFIG, "--work-dir", name, "--cfg-options",
                              "train_cfg.max_epochs=1"], cwd=self.dir, timeout=120)
            self.assertEqual(code, 0, "%r: %s" % (name, text[-3000:]))
            self.assertTrue(os.path.isfile(os.path.join(self.dir, name, "epoch_1.pth")),
                            "%r: %s" % (name, os.listdir(self.dir)))
        code, text = run(["train", TOY_CONFIG, "--work-dir", ""])
        self.assertEqual(code, 2, text)
        self.assertIn("--work-dir", text)

    def test_resume_auto_ignores_stray_files_in_the_work_dir(self):
        work = self.path("work")
        os.makedirs(os.path.join(work, "epoch_7.pth"))  # a directory with a checkpoint's name
        for name in ["epoch_x.pth", "epoch_99999999999999999999.pth", "epoch_.pth",
                     "iter_-3.pth", "epoch_2.pth.tmp-1"]:
            self.write(os.path.join("work", name), "not a checkpoint")
        code, text = run(["train", TOY_CONFIG, "--work-dir", work, "--resume", "auto",
                          "--cfg-options", "train_cfg.max_epochs=1"], timeout=120)
        self.assertEqual(code, 0, text[-3000:])
        self.assertTrue(os.path.isfile(os.path.join(work, "epoch_1.pth")))


if __name__ == "__main__":
    unittest.main()
