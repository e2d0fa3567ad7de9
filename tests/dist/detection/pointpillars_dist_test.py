"""The demo PointPillars config, shortened, trained by `tools/dist_train.sh CONFIG 2` on a small
synthetic dataset; then `tools/dist_test.sh CONFIG CKPT 2` on the last checkpoint must reproduce
the validation metrics training logged for it, and write them to its work dir; with
`--show-dir` it draws the frames it evaluated, with `--submission-dir` it writes them as KITTI
result files.
"""
import glob
import json
import os
import shutil
import socket
import struct
import subprocess
import tempfile
import unittest
import zlib

SOURCE = os.environ["DDP3D_SOURCE_DIR"]
BINARY = os.path.join(os.environ["DDP3D_BINARY_DIR"], "worker", "ddp3d")
CONFIG = os.path.join(SOURCE, "configs", "pointpillars", "pointpillars_demo_synthetic_car.yaml")
EPOCHS = 2


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(script, args, log_path):
    env = dict(os.environ, DDP3D_BIN=BINARY, PORT=str(free_port()))
    with open(log_path, "w") as out:
        code = subprocess.call(["bash", os.path.join(SOURCE, "tools", script)] + args, env=env,
                               stdout=out, stderr=subprocess.STDOUT, timeout=500)
    with open(log_path) as f:
        return code, f.read()


def data_options(data, first):
    """--cfg-options for every loader on `data` (24 synthetic scenes), after `first`."""
    options = [first]
    for loader in ("train_dataloader", "val_dataloader", "test_dataloader"):
        options += ["%s.dataset.data_root=%s" % (loader, data), "%s.dataset.num_scenes=24" % loader]
    return options


def short_training(train_dir, epochs):
    """--cfg-options for `epochs` epochs of batch 2 into train_dir, validated and saved last."""
    return ["work_dir=" + train_dir, "train_cfg.max_epochs=%d" % epochs,
            "train_cfg.val_interval=%d" % epochs, "default_hooks.checkpoint.interval=%d" % epochs,
            "train_dataloader.batch_size=2"]


def read_png(path):
    """(width, height, rows of RGB bytes) of an 8-bit RGB, non-interlaced PNG."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = header
    assert (depth, colour, interlace) == (8, 2, 0), header
    raw, stride, rows, prev = zlib.decompress(idat), width * 3, [], bytearray(width * 3)
    for r in range(height):
        kind, line = raw[r * (stride + 1)], bytearray(raw[r * (stride + 1) + 1:(r + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - 3] if i >= 3 else 0
            b, c = prev[i], (prev[i - 3] if i >= 3 else 0)
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, rows


class PointPillarsDist(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="ddp3d_detection_dist_")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_train_then_dist_test_reproduces_the_metrics(self):
        data = os.path.join(self.tmp, "synth")
        # score_thr 0: a barely trained model's scores are low, and the comparison below needs
        # detections to compare.
        options = data_options(data, "model.test_cfg.score_thr=0.0")
        train_dir = os.path.join(self.tmp, "train")
        code, out = run("dist_train.sh",
                        [CONFIG, "2", "--cfg-options"] + short_training(train_dir, EPOCHS)
                        + options, os.path.join(self.tmp, "train.txt"))
        self.assertEqual(code, 0, out[-3000:])
        self.assertIn("world size 2", out)
        self.assertIn("model PointPillars", out)

        # Training's validation record for the last epoch.
        [run_dir] = [d for d in glob.glob(os.path.join(train_dir, "2*")) if os.path.isdir(d)]
        with open(os.path.join(run_dir, "vis_data", "scalars.json")) as f:
            records = [json.loads(line) for line in f if line.strip()]
        losses = [r["loss"] for r in records if "loss" in r]
        self.assertLess(losses[-1], losses[0], "the loss did not fall: %s" % losses)
        val = [r for r in records if "KITTI/num_detections" in r]
        self.assertEqual(len(val), 1, records)
        self.assertEqual(val[0]["epoch"], EPOCHS)

        # The end-of-run summary: the one validation is the best, by Car 3D AP at moderate.
        self.assertIn("Summary: train finished at epoch %d" % EPOCHS, out)
        with open(os.path.join(train_dir, "train_summary.json")) as f:
            summary = json.load(f)
        self.assertEqual(summary["key_metric"]["name"], "KITTI/Car_3D_AP40_moderate_strict")
        self.assertEqual(summary["best"]["epoch"], EPOCHS, summary)
        self.assertGreater(summary["samples_per_s"], 0)
        self.assertEqual(summary["samples"], summary["iters"] * 2 * 2)  # 2 ranks x batch 2
        for name, value in val[0].items():
            if name.startswith("KITTI/"):
                self.assertAlmostEqual(summary["metrics"][name], value,
                                       delta=1e-8 * max(1.0, abs(value)), msg=name)

        checkpoint = os.path.join(train_dir, "epoch_%d.pth" % EPOCHS)
        self.assertTrue(os.path.exists(checkpoint), os.listdir(train_dir))
        test_dir = os.path.join(self.tmp, "test")
        code, out = run("dist_test.sh", [CONFIG, checkpoint, "2", "--work-dir", test_dir,
                                         "--cfg-options"] + options,
                        os.path.join(self.tmp, "test.txt"))
        self.assertEqual(code, 0, out[-3000:])
        self.assertIn("Car AP40@0.70, 0.70, 0.70", out)  # rank 0 printed the KITTI table
        with open(os.path.join(test_dir, "test_metrics.json")) as f:
            tested = json.load(f)
        self.assertEqual(tested["world_size"], 2)
        self.assertEqual(tested["samples"], 4)  # the val split: int(24 scenes x 0.2)
        self.assertEqual(os.path.realpath(tested["checkpoint"]), os.path.realpath(checkpoint))
        metrics = tested["metrics"]
        self.assertGreater(metrics["KITTI/num_detections"], 0)
        self.assertGreater(metrics["KITTI/mean_score"], 0)
        self.assertIn("KITTI/Car_BEV_AP40_moderate_strict", metrics)
        self.assertGreater(tested["wall_time_s"], 0)
        self.assertAlmostEqual(tested["samples_per_s"], 4 / tested["wall_time_s"], delta=1e-6)
        # The summary's AP table: the strict moderate values, two decimals.
        self.assertIn("Summary: test 4 samples in", out)
        rows = {line.split(" - ")[-1].split()[1]: line.split()[-3:] for line in out.splitlines()
                if " - " in line and line.split(" - ")[-1].startswith("  Car ")}
        self.assertLessEqual({"3D", "BEV"}, set(rows), out[-3000:])
        for kind in ("3D", "BEV"):
            self.assertEqual(rows[kind][1], "%.2f" % metrics["KITTI/Car_%s_AP40_moderate_strict" % kind])
        # The training log keeps 10 significant digits.
        for name, value in val[0].items():
            if name.startswith("KITTI/"):
                self.assertAlmostEqual(metrics[name], value, delta=1e-8 * max(1.0, abs(value)),
                                       msg=name)

        # --show-dir: one bird's-eye view per frame below --show-count, from both ranks, with
        # the ground truth (green) and the predictions (orange, score_thr 0 above) drawn.
        show_dir = os.path.join(self.tmp, "show", "pictures")
        code, out = run("dist_test.sh", [CONFIG, checkpoint, "2", "--work-dir", test_dir,
                                         "--show-dir", show_dir, "--show-count", "3",
                                         "--show-score-thr", "0", "--cfg-options"] + options,
                        os.path.join(self.tmp, "show.txt"))
        self.assertEqual(code, 0, out[-3000:])
        self.assertIn("pictures of the predictions in " + show_dir, out)
        pictures = sorted(os.listdir(show_dir))
        self.assertEqual(len(pictures), 3, pictures)
        for name in pictures:
            self.assertRegex(name, r"^\d{6}\.png$")
            # The demo's range is 40.96 m each way, 2 m of margin around it, 10 px a metre.
            width, height, rows = read_png(os.path.join(show_dir, name))
            self.assertEqual((width, height), (450, 450))
            colours = {row[i:i + 3] for row in rows for i in range(0, len(row), 3)}
            self.assertIn(bytes((0, 230, 0)), colours, f"{name}: no ground-truth box drawn")
            self.assertIn(bytes((255, 150, 0)), colours, f"{name}: no Car prediction drawn")
        # --submission-dir: rank 0 writes one KITTI result file per evaluated frame (16 fields a
        # line, truncated and occluded -1), and the metrics are those of the run above.
        results = os.path.join(self.tmp, "results")
        code, out = run("dist_test.sh", [CONFIG, checkpoint, "2", "--work-dir", test_dir,
                                         "--submission-dir", results, "--cfg-options"] + options,
                        os.path.join(self.tmp, "submission.txt"))
        self.assertEqual(code, 0, out[-3000:])
        self.assertIn("wrote KITTI result files of 4 frames to " + results, out)
        files = sorted(os.listdir(results))
        self.assertEqual(len(files), 4, files)
        lines = [line.split() for name in files for line in open(os.path.join(results, name))]
        self.assertTrue(lines, "no detections written")
        for fields in lines:
            self.assertEqual(len(fields), 16, fields)
            self.assertEqual(fields[0], "Car")
            self.assertEqual(fields[1:3], ["-1", "-1"])
        with open(os.path.join(test_dir, "test_metrics.json")) as f:
            again = json.load(f)["metrics"]
        self.assertEqual(set(again), set(metrics))
        for name, value in metrics.items():
            self.assertAlmostEqual(again[name], value, delta=1e-9 * max(1.0, abs(value)), msg=name)

        # A --show-dir that cannot be written fails at once, naming it, before any evaluation.
        code, out = run("dist_test.sh", [CONFIG, checkpoint, "2", "--show-dir", "/proc/ddp3d-pictures",
                                         "--cfg-options"] + options,
                        os.path.join(self.tmp, "show-bad.txt"))
        self.assertNotEqual(code, 0)
        self.assertIn("--show-dir /proc/ddp3d-pictures: cannot create it", out)
        self.assertNotIn("rendezvous at", out)


if __name__ == "__main__":
    unittest.main()
