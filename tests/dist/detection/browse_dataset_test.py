"""`ddp3d data browse`: pictures of the demo config's training frames on a small synthetic
dataset. Without --augmented each ground-truth box is drawn where its KITTI label puts it
(checked at the pixel of each box centre); with --augmented the frames are transformed and the
same --seed gives the same pictures. Bad input fails with a clear message and exit code.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pointpillars_dist_test import BINARY, CONFIG, read_png  # noqa: E402

GREEN = bytes((0, 230, 0))
# The demo's range (x 0..40.96 m, y -20.48..20.48 m), 2 m of margin, 10 pixels a metre.
X_MAX, Y_MAX, PPM = 40.96 + 2, 20.48 + 2, 10


def browse(*args):
    res = subprocess.run([BINARY, "data", "browse", *args], capture_output=True, text=True,
                         timeout=300)
    return res.returncode, res.stdout + res.stderr


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def calib(path):
    rows = {}
    with open(path) as f:
        for line in f:
            if ":" in line:
                key, values = line.split(":", 1)
                rows[key] = [float(v) for v in values.split()]
    return rows


def camera_to_lidar(point, c):
    """KITTI's camera-rect point to the lidar frame: R0_rect, then Tr_velo_to_cam, inverted
    (both are rotations: inverse = transpose)."""
    r0 = [c["R0_rect"][3 * i:3 * i + 3] for i in range(3)]
    tr = [c["Tr_velo_to_cam"][4 * i:4 * i + 4] for i in range(3)]
    cam = [sum(r0[j][i] * point[j] for j in range(3)) for i in range(3)]
    shifted = [cam[i] - tr[i][3] for i in range(3)]
    return [sum(tr[j][i] * shifted[j] for j in range(3)) for i in range(3)]


class BrowseDataset(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="ddp3d_browse_")
        cls.data = os.path.join(cls.tmp, "synth")
        cls.options = ["--cfg-options", "train_dataloader.dataset.data_root=" + cls.data,
                       "train_dataloader.dataset.num_scenes=24"]

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_plain_frames_show_each_box_at_its_label(self):
        out_dir = os.path.join(self.tmp, "plain")
        # A --count beyond the dataset draws every frame of it.
        code, out = browse(CONFIG, "--out", out_dir, "--count", "9223372036854775807", *self.options)
        self.assertEqual(code, 0, out[-3000:])
        with open(os.path.join(self.data, "ImageSets", "train.txt")) as f:
            train = f.read().split()
        self.assertEqual(sorted(os.listdir(out_dir)), sorted(f + ".png" for f in train))
        self.assertIn("without its random transforms", out)
        checked = 0
        for frame in train[:5]:
            width, height, rows = read_png(os.path.join(out_dir, frame + ".png"))
            self.assertEqual((width, height), (450, 450))
            c = calib(os.path.join(self.data, "training", "calib", frame + ".txt"))
            with open(os.path.join(self.data, "training", "label_2", frame + ".txt")) as labels:
                lines = labels.read().splitlines()
            for line in lines:
                f = line.split()
                if f[0] != "Car":
                    continue
                x, y, _ = camera_to_lidar([float(v) for v in f[11:14]], c)
                if not (0 <= x <= 40.96 and -20.48 <= y <= 20.48):
                    continue  # the range filter drops it
                col, row = round((Y_MAX - y) * PPM), round((X_MAX - x) * PPM)
                near = {rows[r][3 * k:3 * k + 3] for r in range(row - 1, row + 2)
                        for k in range(col - 1, col + 2)}
                self.assertIn(GREEN, near, f"{frame}: no box drawn at ({x:.2f}, {y:.2f}) m, "
                                           f"pixel ({col}, {row})")
                checked += 1
        self.assertGreater(checked, 5)

    def test_augmented_frames_differ_and_repeat_with_the_seed(self):
        a, b, plain = (os.path.join(self.tmp, d) for d in ("aug-a", "aug-b", "aug-plain"))
        for d in (a, b):
            code, out = browse(CONFIG, "--out", d, "--count", "4", "--augmented", "--seed", "7",
                               *self.options)
            self.assertEqual(code, 0, out[-3000:])
            self.assertIn("augmented", out)
        code, out = browse(CONFIG, "--out", plain, "--count", "4", *self.options)
        self.assertEqual(code, 0, out[-3000:])
        names = sorted(os.listdir(a))
        self.assertEqual(len(names), 4)
        differ = 0
        for name in names:
            pa, pb = (read_bytes(os.path.join(d, name)) for d in (a, b))
            self.assertEqual(pa, pb, f"{name}: the same seed drew another picture")
            differ += read_png(os.path.join(a, name))[2] != read_png(os.path.join(plain, name))[2]
        self.assertGreater(differ, 0, "augmentation changed no frame")

    def test_augmented_kitti_config_shows_the_gt_database_objects(self):
        # The KITTI car config (RepeatDataset, ObjectSample) on the synthetic frames, with a GT
        # database made from them: augmented frames carry the pasted objects too.
        browse(CONFIG, "--out", os.path.join(self.tmp, "warm"), "--count", "1", *self.options)
        res = subprocess.run([BINARY, "data", "create-gt-db", self.data, "--split", "train",
                              "--classes", "Car"], capture_output=True, text=True, timeout=120)
        self.assertEqual(res.returncode, 0, res.stderr[-2000:])
        kitti = os.path.join(os.environ["DDP3D_SOURCE_DIR"], "configs", "pointpillars",
                             "pointpillars_hv_secfpn_8xb6-160e_kitti-3d-car.yaml")
        sampler = "train_dataloader.dataset.dataset.pipeline.2.db_sampler."
        options = ["--cfg-options", "train_dataloader.dataset.dataset.data_root=" + self.data,
                   sampler + "data_root=" + self.data,
                   sampler + "info_path=" + os.path.join(self.data, "kitti_dbinfos_train.tsv")]
        boxes = {}
        for mode in ("plain", "augmented"):
            flags = ["--augmented"] if mode == "augmented" else []
            code, out = browse(kitti, "--out", os.path.join(self.tmp, "kitti-" + mode),
                               "--count", "3", *flags, *options)
            self.assertEqual(code, 0, out[-3000:])
            boxes[mode] = int(out.split(" pictures with ")[1].split()[0])
        # ObjectSample fills each frame up to its sample_groups (15 cars) from the database.
        self.assertGreater(boxes["augmented"], boxes["plain"] + 10, boxes)

    def test_bad_input_is_named(self):
        cases = [
            (["--out", os.path.join(self.tmp, "x")], 2, "which config?"),
            ([CONFIG], 2, "--out DIR is required"),
            ([CONFIG, "--out", os.path.join(self.tmp, "x"), "--count", "0"], 2, "--count"),
            ([CONFIG, "--out", os.path.join(self.tmp, "x"), "--count", "1e99"], 2, "--count"),
            ([CONFIG, "--out", os.path.join(self.tmp, "x"), "--bogus"], 2, "unknown flag --bogus"),
            ([CONFIG, "--out", "/proc/ddp3d-browse"] + self.options, 1,
             "--out /proc/ddp3d-browse: cannot create it"),
            ([os.path.join(os.environ["DDP3D_SOURCE_DIR"], "configs", "toy", "toy_regression_2proc.yaml"),
              "--out", os.path.join(self.tmp, "toy")], 1, "holds no KITTI detection dataset"),
            ([os.path.join(self.tmp, "missing.yaml"), "--out", os.path.join(self.tmp, "x")], 2,
             "missing.yaml"),
        ]
        for args, want_code, want in cases:
            code, out = browse(*args)
            self.assertEqual(code, want_code, f"{args}: {out[-2000:]}")
            self.assertIn(want, out, args)


if __name__ == "__main__":
    unittest.main()
