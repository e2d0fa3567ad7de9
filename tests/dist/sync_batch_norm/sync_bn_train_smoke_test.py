"""`tools/dist_train.sh CONFIG 2` with norm_cfg.type SyncBN in the voxel encoder, backbone and
neck: one iteration of the demo PointPillars on 4 synthetic scenes trains, checkpoints and
validates. The same run with BN logs a different first loss: with 2 ranks the first forward
normalises with the statistics of both ranks' batches, so SyncBN really synchronised (the
weights are equal in both runs until the first step, the data and seeds too).
"""
import glob
import json
import os
import shutil
import socket
import subprocess
import tempfile
import unittest

SOURCE = os.environ["DDP3D_SOURCE_DIR"]
BINARY = os.path.join(os.environ["DDP3D_BINARY_DIR"], "worker", "ddp3d")
CONFIG = os.path.join(SOURCE, "configs", "pointpillars", "pointpillars_demo_synthetic_car.yaml")
PARTS = ("voxel_encoder", "backbone", "neck")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class SyncBNTrainSmoke(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="ddp3d_syncbn_smoke_")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def train(self, name, norm_types):
        data = os.path.join(self.tmp, "synth")
        work = os.path.join(self.tmp, name)
        options = ["work_dir=" + work, "train_cfg.max_epochs=1", "train_dataloader.batch_size=2",
                   "default_hooks.logger.interval=1"]
        # 5 scenes: 4 train (one iteration of 2 ranks x 2), 1 val.
        for loader in ("train_dataloader", "val_dataloader", "test_dataloader"):
            options += ["%s.dataset.data_root=%s" % (loader, data),
                        "%s.dataset.num_scenes=5" % loader]
        for part, norm in zip(PARTS, norm_types):
            options.append("model.%s.norm_cfg.type=%s" % (part, norm))
        env = dict(os.environ, DDP3D_BIN=BINARY, PORT=str(free_port()))
        log = os.path.join(self.tmp, name + ".txt")
        with open(log, "w") as out:
            code = subprocess.call(
                ["bash", os.path.join(SOURCE, "tools", "dist_train.sh"), CONFIG, "2",
                 "--cfg-options"] + options,
                env=env, stdout=out, stderr=subprocess.STDOUT, timeout=120)
        with open(log) as f:
            text = f.read()
        self.assertEqual(code, 0, text[-3000:])
        self.assertIn("world size 2", text)
        self.assertTrue(os.path.exists(os.path.join(work, "epoch_1.pth")), os.listdir(work))
        with open(os.path.join(work, "pointpillars_demo_synthetic_car.yaml")) as f:
            dumped = f.read()
        self.assertEqual(dumped.count("type: SyncBN"), list(norm_types).count("SyncBN"))
        [run_dir] = [d for d in glob.glob(os.path.join(work, "2*")) if os.path.isdir(d)]
        with open(os.path.join(run_dir, "vis_data", "scalars.json")) as f:
            records = [json.loads(line) for line in f if line.strip()]
        losses = [r["loss"] for r in records if "loss" in r]
        self.assertEqual(len(losses), 1, records)
        self.assertTrue(0 < losses[0] < 1e3, losses)
        return losses[0]

    def test_one_iteration_with_syncbn_in_every_part(self):
        sync = self.train("sync", ("SyncBN", "SyncBN", "SyncBN"))
        plain = self.train("plain", ("BN1d", "BN", "BN"))
        print("first loss: SyncBN %.9g, BN %.9g" % (sync, plain))
        self.assertGreater(abs(sync - plain), 1e-6 * abs(plain))


if __name__ == "__main__":
    unittest.main()
