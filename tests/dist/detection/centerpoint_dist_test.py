"""The CenterPoint demo config, shortened, trained by `tools/dist_train.sh CONFIG 2` on a small
synthetic dataset; `tools/dist_test.sh CONFIG CKPT 2` on the last checkpoint must reproduce the
validation metrics training logged for it.
"""
import glob
import json
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pointpillars_dist_test import SOURCE, data_options, run, short_training  # noqa: E402

CONFIG = os.path.join(SOURCE, "configs", "centerpoint", "centerpoint_demo_synthetic_car.yaml")
EPOCHS = 4  # after 2 epochs of 5 iterations the heatmap is still empty: no detections to compare


class CenterPointDist(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="ddp3d_centerpoint_dist_")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_train_then_dist_test_reproduces_the_metrics(self):
        data = os.path.join(self.tmp, "synth")
        # score_threshold 0: a barely trained model's peaks are low, and the comparison below
        # needs detections to compare.
        options = data_options(data, "model.bbox_head.bbox_coder.score_threshold=0.0")
        train_dir = os.path.join(self.tmp, "train")
        code, out = run("dist_train.sh",
                        [CONFIG, "2", "--cfg-options"] + short_training(train_dir, EPOCHS)
                        + options, os.path.join(self.tmp, "train.txt"))
        self.assertEqual(code, 0, out[-3000:])
        self.assertIn("world size 2", out)
        self.assertIn("model CenterPoint", out)

        [run_dir] = [d for d in glob.glob(os.path.join(train_dir, "2*")) if os.path.isdir(d)]
        with open(os.path.join(run_dir, "vis_data", "scalars.json")) as f:
            records = [json.loads(line) for line in f if line.strip()]
        trained = [r for r in records if "loss_heatmap" in r]
        self.assertTrue(trained, records)
        for r in trained:
            self.assertAlmostEqual(r["loss"], r["loss_heatmap"] + r["loss_bbox"],
                                   delta=1e-3 * r["loss"])
        self.assertLess(trained[-1]["loss_heatmap"], trained[0]["loss_heatmap"],
                        "the heatmap loss did not fall: %s" % trained)
        val = [r for r in records if "KITTI/num_detections" in r]
        self.assertEqual(len(val), 1, records)
        self.assertGreater(val[0]["KITTI/num_detections"], 0)

        checkpoint = os.path.join(train_dir, "epoch_%d.pth" % EPOCHS)
        self.assertTrue(os.path.exists(checkpoint), os.listdir(train_dir))
        test_dir = os.path.join(self.tmp, "test")
        code, out = run("dist_test.sh", [CONFIG, checkpoint, "2", "--work-dir", test_dir,
                                         "--cfg-options"] + options,
                        os.path.join(self.tmp, "test.txt"))
        self.assertEqual(code, 0, out[-3000:])
        self.assertIn("Car AP40@0.70, 0.70, 0.70", out)
        with open(os.path.join(test_dir, "test_metrics.json")) as f:
            tested = json.load(f)
        self.assertEqual(tested["world_size"], 2)
        metrics = tested["metrics"]
        for name, value in val[0].items():
            if name.startswith("KITTI/"):
                self.assertAlmostEqual(metrics[name], value, delta=1e-8 * max(1.0, abs(value)),
                                       msg=name)

        # A PointPillars config cannot load this checkpoint: the heads differ, and the error
        # names a parameter instead of evaluating garbage.
        pointpillars = os.path.join(SOURCE, "configs", "pointpillars",
                                    "pointpillars_demo_synthetic_car.yaml")
        code, out = run("dist_test.sh", [pointpillars, checkpoint, "2", "--work-dir", test_dir,
                                         "--cfg-options"] + options[1:],
                        os.path.join(self.tmp, "mismatch.txt"))
        self.assertNotEqual(code, 0, out[-3000:])
        self.assertIn("bbox_head.", out)


if __name__ == "__main__":
    unittest.main()
