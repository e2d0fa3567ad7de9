"""KITTI loading, the train pipeline and pillar voxelization in Python/PyTorch: the data half of
the reference in benchmarks/pointpillars (the C++ side is worker/data).

Semantics match ddp3d's C++ (and mmdetection3d's): LiDAR boxes (x, y, z_bottom, dx, dy, dz,
yaw) from camera labels through R0_rect and Tr_velo_to_cam; hard voxelization as mmcv's
(points in order, a voxel per new cell while fewer than max_voxels exist, at most max_points
points per voxel, voxels numbered by first appearance) - vectorised with torch ops, as a
PyTorch user without mmcv's C++ extension would write it.
"""
import math

import numpy as np
import torch

MASK64 = (1 << 64) - 1


# ---------------------------------------------------------------- sample order and draws
# Pure functions of (seed, iteration, rank, slot), bit-identical to augment_draw.h.


def splitmix64(x):
    z = (x + 0x9E3779B97F4A7C15) & MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


def unit(bits):
    return (bits >> 11) * (1.0 / 9007199254740992.0)


def sample_index(iteration, rank, world, batch, j, size):
    return ((iteration * world + rank) * batch + j) % size


def draw_augment(seed, iteration, rank, j, a):
    state = splitmix64(splitmix64(splitmix64(seed) ^ iteration) ^ (rank * 4096 + j))
    r, s = a["rot_range"], a["scale_range"]
    return {
        "flip": unit(splitmix64(state + 1)) < a["flip_ratio"],
        "angle": r[0] + (r[1] - r[0]) * unit(splitmix64(state + 2)),
        "scale": s[0] + (s[1] - s[0]) * unit(splitmix64(state + 3)),
        "shuffle_seed": splitmix64(state + 4),
        "point_shuffle": a.get("point_shuffle", True),
    }


# ---------------------------------------------------------------- KITTI files


def read_calib(path):
    rows = {}
    with open(path) as f:
        for line in f:
            if ":" not in line:
                continue
            key, values = line.split(":", 1)
            rows[key.strip()] = np.array([float(v) for v in values.split()], dtype=np.float64)
    try:
        return rows["R0_rect"].reshape(3, 3), rows["Tr_velo_to_cam"].reshape(3, 4)
    except KeyError as e:
        raise ValueError(f"{path}: missing {e.args[0]}") from None


def read_labels(path):
    """[(type, h, w, l, x, y, z, rotation_y)] for every label line."""
    objects = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) not in (15, 16):
                raise ValueError(f"{path}:{n}: expected 15 or 16 fields, got {len(fields)}")
            objects.append((fields[0], *map(float, fields[8:15])))
    return objects


def wrap_angle(a):
    return a - np.floor((a + math.pi) / (2 * math.pi)) * 2 * math.pi


class KittiDataset:
    def __init__(self, root, split, classes):
        self.root = root
        self.classes = list(classes)
        with open(f"{root}/ImageSets/{split}.txt") as f:
            self.ids = f.read().split()
        if not self.ids:
            raise ValueError(f"{root}/ImageSets/{split}.txt lists no frames")

    def __len__(self):
        return len(self.ids)

    def load(self, index):
        fid = self.ids[index]
        base = f"{self.root}/training"
        points = torch.from_numpy(
            np.fromfile(f"{base}/velodyne/{fid}.bin", dtype=np.float32).reshape(-1, 4))
        r0, tr = read_calib(f"{base}/calib/{fid}.txt")
        objects = [o for o in read_labels(f"{base}/label_2/{fid}.txt") if o[0] in self.classes]
        if not objects:
            return points, torch.zeros(0, 7), torch.zeros(0, dtype=torch.long)
        arr = np.array([o[1:] for o in objects], dtype=np.float64)  # h w l x y z ry
        # camera -> LiDAR: undo R0_rect, then the rigid Tr_velo_to_cam.
        cam = np.linalg.solve(r0, arr[:, 3:6].T)
        lidar = np.linalg.solve(tr[:, :3], cam - tr[:, 3:4]).T
        yaw = wrap_angle(-arr[:, 6] - math.pi / 2)
        boxes = np.concatenate([lidar, arr[:, 2:3], arr[:, 1:2], arr[:, 0:1], yaw[:, None]], 1)
        labels = [self.classes.index(o[0]) for o in objects]
        return (points, torch.from_numpy(boxes.astype(np.float32)),
                torch.tensor(labels, dtype=torch.long))


# ---------------------------------------------------------------- train pipeline


def wrap(t):
    return t - torch.floor((t + math.pi) / (2 * math.pi)) * (2 * math.pi)


def augment(points, boxes, labels, d, pcr):
    """RandomFlip3D, GlobalRotScaleTrans, PointsRangeFilter, ObjectRangeFilter, PointShuffle."""
    points, boxes = points.clone(), boxes.clone()
    if d["flip"]:
        points[:, 1] = -points[:, 1]
        boxes[:, 1] = -boxes[:, 1]
        boxes[:, 6] = -boxes[:, 6]
    c, s = math.cos(d["angle"]), math.sin(d["angle"])
    rot_t = torch.tensor([[c, s], [-s, c]], dtype=torch.float32)
    points[:, :2] = points[:, :2] @ rot_t
    points[:, :3] *= d["scale"]
    if boxes.shape[0]:
        boxes[:, :2] = boxes[:, :2] @ rot_t
        boxes[:, :6] *= d["scale"]
        boxes[:, 6] = wrap(boxes[:, 6] + d["angle"])
    keep = ((points[:, 0] >= pcr[0]) & (points[:, 1] >= pcr[1]) & (points[:, 2] >= pcr[2])
            & (points[:, 0] < pcr[3]) & (points[:, 1] < pcr[4]) & (points[:, 2] < pcr[5]))
    points = points[keep]
    keep = ((boxes[:, 0] > pcr[0]) & (boxes[:, 1] > pcr[1]) & (boxes[:, 0] < pcr[3])
            & (boxes[:, 1] < pcr[4]))
    boxes, labels = boxes[keep], labels[keep]
    if boxes.shape[0]:
        boxes[:, 6] = wrap(boxes[:, 6])
    if d["point_shuffle"]:
        g = torch.Generator().manual_seed(d["shuffle_seed"])
        points = points[torch.randperm(points.shape[0], generator=g)]
    return points, boxes, labels


# ---------------------------------------------------------------- voxelization


def voxelize(points, v):
    """-> voxels [M, P, C] (zero padded), coors [M, 3] (z, y, x) int64, num_points [M] int32."""
    pcr, vs = v["point_cloud_range"], v["voxel_size"]
    max_points, max_voxels = v["max_points"], v["max_voxels"]
    grid = [round((pcr[a + 3] - pcr[a]) / vs[a]) for a in range(3)]
    lo = torch.tensor(pcr[:3], dtype=torch.float64)
    cell = torch.floor((points[:, :3].double() - lo) / torch.tensor(vs, dtype=torch.float64))
    cell = cell.long()
    inside = ((cell >= 0) & (cell < torch.tensor(grid))).all(dim=1)
    pts, cell = points[inside], cell[inside]
    key = (cell[:, 2] * grid[1] + cell[:, 1]) * grid[0] + cell[:, 0]
    # A stable sort groups each cell's points in point order; a group's first entry is the
    # cell's first point.
    sorted_key, perm = torch.sort(key, stable=True)
    new_group = torch.ones_like(sorted_key, dtype=torch.bool)
    new_group[1:] = sorted_key[1:] != sorted_key[:-1]
    group_start = new_group.nonzero().squeeze(1)
    group_of = torch.cumsum(new_group, 0) - 1
    counts = torch.diff(group_start, append=torch.tensor([key.numel()]))
    # Voxel ids in order of first appearance; voxels past max_voxels take no points.
    first_point = perm[group_start]
    by_first = torch.argsort(first_point)
    m = min(by_first.numel(), max_voxels)
    voxel_of_group = torch.empty_like(by_first)
    voxel_of_group[by_first] = torch.arange(by_first.numel())
    vid = voxel_of_group[group_of]
    slot = torch.arange(key.numel()) - group_start[group_of]
    take = (vid < m) & (slot < max_points)
    voxels = points.new_zeros(m, max_points, points.shape[1])
    voxels[vid[take], slot[take]] = pts[perm[take]]
    coors = cell[first_point[by_first[:m]]].flip(1)  # (x, y, z) -> (z, y, x)
    num_points = counts[by_first[:m]].clamp(max=max_points).int()
    return voxels, coors, num_points


def collate(per_sample):
    voxels = torch.cat([v for v, _, _ in per_sample])
    coors = torch.cat([
        torch.cat([torch.full((c.shape[0], 1), b, dtype=torch.long), c], 1)
        for b, (_, c, _) in enumerate(per_sample)
    ])
    num_points = torch.cat([n for _, _, n in per_sample])
    return voxels, coors, num_points
