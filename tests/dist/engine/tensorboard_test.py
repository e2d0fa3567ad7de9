"""TensorboardVisBackend read by TensorBoard's own reader (EventAccumulator, from the
`tensorboard` package): a 2-process toy run's charts equal its scalars.json, and after a
resume from a mid-run checkpoint every step shows once, the steps after the checkpoint from the
resumed run; the demo detector's validation pictures (default_hooks.visualization) read back
as images. Also the image API: a picture written by tensorboard_event_sample reads back.

Run with the venv's python (tools/setup.sh installs tensorboard there).
"""
import glob
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from toy_training_test import read_output, run_dirs, start_ranks, wait_all  # noqa: E402

from tensorboard.backend.event_processing import event_accumulator  # noqa: E402

BACKENDS = ["visualizer.vis_backends=[{type: LocalVisBackend}, {type: TensorboardVisBackend}]"]
DEMO_CONFIG = os.path.join(os.environ["DDP3D_SOURCE_DIR"], "configs", "pointpillars",
                           "pointpillars_demo_synthetic_car.yaml")
SAMPLE = os.path.join(os.environ["DDP3D_BINARY_DIR"], "tests", "unit", "visual",
                      "tensorboard_event_sample")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scalars_json(run_dir):
    """{tag: {step: value}} as TensorBoard should show it: a training record's keys but
    "step" and "iter" (the step itself), a validation record's metrics."""
    charts = {}
    with open(os.path.join(run_dir, "vis_data", "scalars.json")) as f:
        for line in f:
            record = json.loads(line)
            skip = ("step", "iter") if "iter" in record else ("step", "epoch")
            for key, value in record.items():
                if key not in skip:
                    charts.setdefault(key, {})[record["step"]] = value
    return charts


def read_charts(log_dir):
    """{tag: [(step, value), ...]} as TensorBoard's reader shows the directory."""
    acc = event_accumulator.EventAccumulator(log_dir, size_guidance={event_accumulator.SCALARS: 0})
    acc.Reload()
    return {tag: [(e.step, e.value) for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}


class Tensorboard(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="ddp3d_tensorboard_")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def assert_close(self, got, want, what):
        self.assertLessEqual(abs(got - want), 1e-6 * max(1.0, abs(want)), "%s: %r != %r" % (what, got, want))

    def test_charts_equal_scalars_json_and_a_resume_replaces_the_steps_after_its_checkpoint(self):
        work = os.path.join(self.tmp, "work")
        common = ["--cfg-options", "default_hooks.checkpoint.max_keep_ckpts=-1"] + BACKENDS
        self.assertEqual(wait_all(start_ranks(["--work-dir", work] + common, self.tmp, "first")), [0, 0],
                         read_output(self.tmp, "first"))
        first = scalars_json(run_dirs(work)[-1])
        charts = read_charts(os.path.join(work, "tensorboard"))
        self.assertEqual(sorted(charts), sorted(first))
        self.assertEqual(set(charts), {"lr", "momentum", "data_time", "loss", "time", "epoch",
                                       "mse", "mae", "count"})
        for tag, points in charts.items():
            self.assertEqual([s for s, _ in points], sorted(first[tag]), tag)
            for step, value in points:
                self.assert_close(value, first[tag][step], "%s at step %d" % (tag, step))
        print("first run: %d tags, %d steps of loss" % (len(charts), len(charts["loss"])))

        # Resume from epoch 3 of 6, as after a crash there: the later checkpoints go.
        resume_step = max(s for s, _ in charts["loss"]) // 2
        for path in glob.glob(os.path.join(work, "epoch_*.pth")):
            if int(os.path.basename(path)[6:-4]) > 3:
                os.remove(path)
        os.remove(os.path.join(work, "last_checkpoint"))
        self.assertEqual(wait_all(start_ranks(["--work-dir", work, "--resume", "auto"] + common,
                                              self.tmp, "resumed")), [0, 0], read_output(self.tmp, "resumed"))
        self.assertIn("resumed from %s" % os.path.join(work, "epoch_3.pth"), read_output(self.tmp, "resumed"))
        second = scalars_json(run_dirs(work)[-1])
        self.assertEqual(min(second["loss"]), resume_step + 8)  # logger interval 8
        self.assertEqual(len(glob.glob(os.path.join(work, "tensorboard", "events.out.tfevents.*"))), 2)

        charts = read_charts(os.path.join(work, "tensorboard"))
        self.assertEqual(sorted(charts), sorted(first))
        timings_differ = False
        for tag, points in charts.items():
            steps = [s for s, _ in points]
            self.assertEqual(len(steps), len(set(steps)), "%s: a step shown twice: %s" % (tag, steps))
            self.assertEqual(steps, sorted(set(first[tag]) | set(second[tag])), tag)
            for step, value in points:
                source = first if step <= resume_step else second
                self.assert_close(value, source[tag][step], "%s at step %d" % (tag, step))
                if tag == "time" and step > resume_step and value != first["time"][step]:
                    timings_differ = True
        # Timings differ between two runs, so the checks above told the runs apart.
        self.assertTrue(timings_differ)
        print("resumed at step %d: every step once, %d after the resume from the second run"
              % (resume_step, len([s for s, _ in charts["loss"] if s > resume_step])))

    def test_validation_pictures_of_the_demo_detector_read_back_as_images(self):
        # The demo PointPillars config (TensorBoard on), one short epoch on a few scenes, with
        # default_hooks.visualization drawing rank 0's validation frames (index below 8).
        data, work = os.path.join(self.tmp, "synth"), os.path.join(self.tmp, "pp")
        options = ["work_dir=" + work, "train_cfg.max_epochs=1", "train_dataloader.batch_size=2",
                   "model.test_cfg.score_thr=0.0", "default_hooks.visualization.draw=true",
                   "default_hooks.visualization.frames=8"]
        for loader in ("train_dataloader", "val_dataloader", "test_dataloader"):
            options += ["%s.dataset.data_root=%s" % (loader, data), "%s.dataset.num_scenes=40" % loader]
        env = dict(os.environ, DDP3D_BIN=os.path.join(os.environ["DDP3D_BINARY_DIR"], "worker", "ddp3d"),
                   PORT=str(free_port()))
        out = subprocess.run(["bash", os.path.join(os.environ["DDP3D_SOURCE_DIR"], "tools", "dist_train.sh"),
                              DEMO_CONFIG, "2", "--cfg-options"] + options, env=env,
                             capture_output=True, text=True, timeout=400)
        self.assertEqual(out.returncode, 0, (out.stdout + out.stderr)[-3000:])
        acc = event_accumulator.EventAccumulator(os.path.join(work, "tensorboard"),
                                                 size_guidance={event_accumulator.IMAGES: 0})
        acc.Reload()
        tags = sorted(acc.Tags()["images"])
        # Rank 0 validates the even indices of the 8 val frames (the sampler does not shuffle).
        self.assertEqual(len(tags), 4, tags)
        [val_step] = {s for s, _ in read_charts(os.path.join(work, "tensorboard"))["KITTI/num_detections"]}
        for tag in tags:
            self.assertTrue(tag.startswith("val/bev/"), tag)
            [image] = acc.Images(tag)
            self.assertEqual(image.step, val_step)
            png = image.encoded_image_string
            self.assertEqual(png[:8], b"\x89PNG\r\n\x1a\n")
            self.assertEqual((image.width, image.height), struct.unpack(">II", png[16:24]))
        # The same pictures under LocalVisBackend's vis_image/, and no drawing folder left.
        [run_dir] = run_dirs(work)
        self.assertEqual(len(glob.glob(os.path.join(run_dir, "vis_data", "vis_image", "*.png"))), len(tags))
        self.assertFalse(os.path.exists(os.path.join(work, ".val_pictures")))
        print("validation pictures at step %d: %s" % (val_step, tags))

    def test_an_image_reads_back_with_its_size_and_bytes(self):
        log_dir = os.path.join(self.tmp, "tb")
        out = subprocess.run([SAMPLE, log_dir], capture_output=True, text=True, timeout=60)
        self.assertEqual(out.returncode, 0, out.stderr)
        png_path, tag, step = out.stdout.split()
        acc = event_accumulator.EventAccumulator(log_dir, size_guidance={event_accumulator.IMAGES: 0})
        acc.Reload()
        self.assertEqual(acc.Tags()["images"], [tag])
        [image] = acc.Images(tag)
        with open(png_path, "rb") as f:
            png = f.read()
        self.assertEqual((image.step, image.width, image.height), (int(step), 40, 30))
        self.assertEqual(image.encoded_image_string, png)
        self.assertEqual([(e.step, e.value) for e in acc.Scalars("sample/value")], [(int(step), 0.25)])


if __name__ == "__main__":
    unittest.main()
