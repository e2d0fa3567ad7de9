"""PointPillars in plain PyTorch: the reference network for benchmarks/pointpillars/run.

The same architecture, initialisation scheme, anchor assignment and losses as ddp3d's C++
model (worker/models), written the way a PyTorch user would write them (mmdetection3d's
structure, without mmcv/mmdet): PillarFeatureNet -> PointPillarsScatter -> SECOND ->
SECONDFPN -> Anchor3DHead (anchors, Max3DIoUAssigner on nearest-BEV IoU, DeltaXYZWLHR coder,
focal / smooth-L1 / direction cross-entropy losses normalised by the number of positives).

Built from the JSON spec that `pointpillars_bench --dump-spec` writes, so its sizes always
equal the C++ model's; `PointPillars.num_parameters()` is checked against the C++ count.
"""
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class PFNLayer(nn.Module):
    """Linear (no bias) -> BN1d over every (pillar, point) -> ReLU -> max/avg over points."""

    def __init__(self, cin, cout, norm, last, mode):
        super().__init__()
        self.last = last
        self.mode = mode
        self.units = cout if last else cout // 2
        self.linear = nn.Linear(cin, self.units, bias=False)
        self.norm = nn.BatchNorm1d(self.units, eps=norm["eps"], momentum=norm["momentum"])

    def forward(self, x, num_points):
        m, p, _ = x.shape
        x = self.linear(x)
        x = F.relu(self.norm(x.reshape(m * p, self.units)).reshape(m, p, self.units))
        if self.mode == "max":
            pooled = x.max(dim=1, keepdim=True)[0]
        else:
            pooled = x.sum(dim=1, keepdim=True) / num_points.to(x.dtype).view(-1, 1, 1)
        if self.last:
            return pooled
        return torch.cat([x, pooled.expand(m, p, self.units)], dim=2)


class PillarFeatureNet(nn.Module):
    def __init__(self, o):
        super().__init__()
        self.o = o
        c = o["in_channels"] + 3 * o["with_cluster_center"] + 3 * o["with_voxel_center"]
        c += 1 if o["with_distance"] else 0
        layers = []
        feats = o["feat_channels"]
        for i, f in enumerate(feats):
            layers.append(PFNLayer(c, f, o["norm_cfg"], i + 1 == len(feats), o["mode"]))
            c = f
        self.pfn_layers = nn.ModuleList(layers)
        vs, pcr = o["voxel_size"], o["point_cloud_range"]
        self.register_buffer("cell_size", torch.tensor(vs, dtype=torch.float32), persistent=False)
        self.register_buffer(
            "cell_origin",
            torch.tensor([pcr[i] + vs[i] / 2 for i in range(3)], dtype=torch.float32),
            persistent=False)

    def forward(self, voxels, num_points, coors):
        p = voxels.shape[1]
        mask = (torch.arange(p, device=voxels.device).unsqueeze(0)
                < num_points.unsqueeze(1)).unsqueeze(2).to(voxels.dtype)
        points = voxels * mask
        xyz = points[:, :, :3]
        parts = []
        f_cluster = f_center = None
        if self.o["with_cluster_center"]:
            counts = num_points.to(voxels.dtype).clamp(min=1).view(-1, 1, 1)
            f_cluster = xyz - xyz.sum(dim=1, keepdim=True) / counts
        if self.o["with_voxel_center"]:
            centre = coors[:, [3, 2, 1]].to(voxels.dtype) * self.cell_size + self.cell_origin
            f_center = xyz - centre.unsqueeze(1)
        if self.o["with_voxel_center"] and self.o["legacy"]:
            # mmdet3d's legacy layout: the centre offsets replace the raw x, y, z.
            parts.append(torch.cat([f_center, points[:, :, 3:]], dim=2))
        else:
            parts.append(points)
        if f_cluster is not None:
            parts.append(f_cluster)
        if f_center is not None:
            parts.append(f_center)
        if self.o["with_distance"]:
            parts.append(xyz.norm(dim=2, keepdim=True))
        x = torch.cat(parts, dim=2) * mask
        for layer in self.pfn_layers:
            x = layer(x, num_points)
        return x.squeeze(1)


class PointPillarsScatter(nn.Module):
    def __init__(self, o):
        super().__init__()
        self.c = o["in_channels"]
        self.ny, self.nx = o["output_shape"]

    def forward(self, feats, coors, batch_size):
        # One canvas per sample, filled by advanced indexing (mmdet3d's scatter).
        canvases = []
        for b in range(batch_size):
            sel = coors[:, 0] == b
            c = coors[sel]
            canvas = feats.new_zeros(self.c, self.ny * self.nx)
            canvas[:, c[:, 2] * self.nx + c[:, 3]] = feats[sel].t()
            canvases.append(canvas)
        return torch.stack(canvases).view(batch_size, self.c, self.ny, self.nx)


def conv_bn_relu(conv, cout, norm):
    nn.init.kaiming_normal_(conv.weight, mode="fan_out", nonlinearity="relu")
    return [conv, nn.BatchNorm2d(cout, eps=norm["eps"], momentum=norm["momentum"]), nn.ReLU()]


class SECOND(nn.Module):
    def __init__(self, o):
        super().__init__()
        blocks = []
        cin = o["in_channels"]
        for cout, n, stride in zip(o["out_channels"], o["layer_nums"], o["layer_strides"]):
            layers = conv_bn_relu(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), cout,
                                  o["norm_cfg"])
            for _ in range(n):
                layers += conv_bn_relu(nn.Conv2d(cout, cout, 3, 1, 1, bias=False), cout,
                                       o["norm_cfg"])
            blocks.append(nn.Sequential(*layers))
            cin = cout
        self.blocks = nn.ModuleList(blocks)

    def forward(self, x):
        outs = []
        for block in self.blocks:
            x = block(x)
            outs.append(x)
        return outs


class SECONDFPN(nn.Module):
    def __init__(self, o):
        super().__init__()
        deblocks = []
        for cin, cout, s in zip(o["in_channels"], o["out_channels"], o["upsample_strides"]):
            if s > 1 or (s == 1 and not o["use_conv_for_no_stride"]):
                k = int(s)
                conv = nn.ConvTranspose2d(cin, cout, k, stride=k, bias=False)
            else:
                k = round(1 / s)
                conv = nn.Conv2d(cin, cout, k, stride=k, bias=False)
            deblocks.append(nn.Sequential(*conv_bn_relu(conv, cout, o["norm_cfg"])))
        self.deblocks = nn.ModuleList(deblocks)

    def forward(self, feats):
        ups = [d(f) for d, f in zip(self.deblocks, feats)]
        return ups[0] if len(ups) == 1 else torch.cat(ups, dim=1)


# ---------------------------------------------------------------- anchors, assignment, coder


def grid_anchors(g, h, w):
    """[H, W, sizes, rotations, 7] anchors (x, y, z_bottom, dx, dy, dz, yaw)."""
    rot = torch.tensor(g["rotations"], dtype=torch.float64)
    r = rot.numel()

    def centres(lo, hi, n):
        edges = torch.linspace(lo, hi, n + 1, dtype=torch.float64)
        if not g["align_corner"]:
            edges = edges + (hi - lo) / n / 2
        return edges[:n]

    per_size = []
    for k, size in enumerate(g["sizes"]):
        rng = g["ranges"][0] if len(g["ranges"]) == 1 else g["ranges"][k]
        ys = centres(rng[1], rng[4], h).view(h, 1, 1).expand(h, w, r)
        xs = centres(rng[0], rng[3], w).view(1, w, 1).expand(h, w, r)
        z = centres(rng[2], rng[5], 1).item()
        ones = torch.ones(h, w, r, dtype=torch.float64)
        yaw = rot.view(1, 1, r).expand(h, w, r)
        per_size.append(torch.stack(
            [xs, ys, ones * z, ones * size[0], ones * size[1], ones * size[2], yaw], dim=-1))
    return torch.stack(per_size, dim=2).float()


def nearest_bev(boxes):
    """Axis-aligned BEV footprint after snapping yaw to the nearest multiple of pi/2."""
    yaw = boxes[:, 6]
    wrapped = yaw - torch.floor(yaw / math.pi + 0.5) * math.pi
    swap = (wrapped.abs() > math.pi / 4).unsqueeze(1)
    dims = boxes[:, 3:5]
    half = torch.where(swap, dims.flip(1), dims) / 2
    return torch.cat([boxes[:, :2] - half, boxes[:, :2] + half], dim=1)


def iou_aligned(a, b):
    a, b = a.unsqueeze(1), b.unsqueeze(0)
    area_a = (a[..., 2] - a[..., 0]) * (a[..., 3] - a[..., 1])
    area_b = (b[..., 2] - b[..., 0]) * (b[..., 3] - b[..., 1])
    lt = torch.maximum(a[..., :2], b[..., :2])
    rb = torch.minimum(a[..., 2:], b[..., 2:])
    wh = (rb - lt).clamp(min=0)
    inter = wh[..., 0] * wh[..., 1]
    return inter / (area_a + area_b - inter).clamp(min=1e-6)


def assign(o, anchors, gts):
    """MaxIoUAssigner on nearest-BEV IoU: [A] with 0 negative, -1 ignored, k > 0 gt k-1."""
    if gts.shape[0] == 0:
        return torch.zeros(anchors.shape[0], dtype=torch.long)
    overlaps = iou_aligned(nearest_bev(gts), nearest_bev(anchors))  # [G, A]
    max_ov, argmax = overlaps.max(dim=0)
    gt_max = overlaps.max(dim=1)[0]
    assigned = torch.full((anchors.shape[0],), -1, dtype=torch.long)
    assigned[(max_ov >= 0) & (max_ov < o["neg_iou_thr"])] = 0
    pos = max_ov >= o["pos_iou_thr"]
    assigned[pos] = argmax[pos] + 1
    if o["match_low_quality"]:
        for i in range(gts.shape[0]):
            best = gt_max[i].item()
            if best < o["min_pos_iou"]:
                continue
            if o["gt_max_assign_all"]:
                assigned[overlaps[i] == best] = i + 1
            else:
                assigned[overlaps[i].argmax()] = i + 1
    return assigned


def encode(a, g):
    za = a[:, 2] + a[:, 5] / 2
    zg = g[:, 2] + g[:, 5] / 2
    diag = torch.sqrt(a[:, 3] ** 2 + a[:, 4] ** 2)
    return torch.stack([(g[:, 0] - a[:, 0]) / diag, (g[:, 1] - a[:, 1]) / diag,
                        (zg - za) / a[:, 5], torch.log(g[:, 3] / a[:, 3]),
                        torch.log(g[:, 4] / a[:, 4]), torch.log(g[:, 5] / a[:, 5]),
                        g[:, 6] - a[:, 6]], dim=-1)


def limit_period(val, offset, period):
    return val - torch.floor(val / period + offset) * period


# ---------------------------------------------------------------- losses


def focal_loss(logits, labels, weight, avg, o):
    c = logits.shape[1]
    target = F.one_hot(labels, c + 1)[:, :c].to(logits.dtype)
    p = logits.sigmoid()
    pt = (1 - p) * target + p * (1 - target)
    a = o["alpha"]
    fw = (a * target + (1 - a) * (1 - target)) * pt.pow(o["gamma"])
    loss = F.binary_cross_entropy_with_logits(logits, target, reduction="none") * fw
    return o["loss_weight"] * (loss * weight.view(-1, 1)).sum() / (avg + EPS)


def smooth_l1(pred, target, weight, avg, o):
    beta = o["beta"]
    d = (pred - target).abs()
    loss = torch.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta)
    return o["loss_weight"] * (loss * weight).sum() / (avg + EPS)


def dir_cross_entropy(logits, labels, weight, avg, o):
    nll = F.cross_entropy(logits, labels, reduction="none")
    return o["loss_weight"] * (nll * weight).sum() / (avg + EPS)


EPS = torch.finfo(torch.float32).eps


class Anchor3DHead(nn.Module):
    # Wall and thread-CPU seconds spent in targets(), summed; the benchmark reads and resets them.
    assign_wall = 0.0
    assign_cpu = 0.0

    def __init__(self, o, train_cfg):
        super().__init__()
        self.o = o
        self.train_cfg = train_cfg
        g = o["anchor_generator"]
        self.num_anchors = len(g["sizes"]) * len(g["rotations"])
        a, c, fc = self.num_anchors, o["num_classes"], o["feat_channels"]
        self.conv_cls = nn.Conv2d(fc, a * c, 1)
        self.conv_reg = nn.Conv2d(fc, a * 7, 1)
        self.conv_dir_cls = nn.Conv2d(fc, a * 2, 1) if o["use_direction_classifier"] else None
        for conv in (self.conv_cls, self.conv_reg, self.conv_dir_cls):
            if conv is not None:
                nn.init.normal_(conv.weight, 0, 0.01)
                nn.init.constant_(conv.bias, 0)
        nn.init.constant_(self.conv_cls.bias, -math.log((1 - 0.01) / 0.01))

    def forward(self, x):
        dir_pred = self.conv_dir_cls(x) if self.conv_dir_cls is not None else None
        return self.conv_cls(x), self.conv_reg(x), dir_pred

    def targets(self, anchors, gt_boxes, gt_labels):
        t0, c0 = time.perf_counter(), time.thread_time()
        n = anchors.numel() // 7
        sizes, rots = anchors.shape[2], anchors.shape[3]
        flat = anchors.reshape(n, 7)
        position = torch.arange(n).view(-1, sizes, rots)
        assigners = self.train_cfg["assigner"]
        per_size = len(assigners) > 1
        c = self.o["num_classes"]
        pos_w = self.train_cfg["pos_weight"] if self.train_cfg["pos_weight"] > 0 else 1.0
        out = {k: [] for k in ("labels", "label_w", "bbox_t", "bbox_w", "dir_t", "dir_w")}
        num_total_pos = 0
        for boxes, glabels in zip(gt_boxes, gt_labels):
            gts = boxes[:, :7].float()
            labels = torch.full((n,), c, dtype=torch.long)
            label_w = torch.zeros(n)
            bbox_t = torch.zeros(n, 7)
            bbox_w = torch.zeros(n, 7)
            dir_t = torch.zeros(n, dtype=torch.long)
            dir_w = torch.zeros(n)
            num_pos = 0
            for k in range(sizes if per_size else 1):
                idx = position[:, k].reshape(-1) if per_size else torch.arange(n)
                group = flat[idx]
                g, gl = gts, glabels
                if per_size and self.o["assign_per_class"]:
                    keep = glabels == k
                    g, gl = gts[keep], glabels[keep]
                assigned = assign(assigners[k if per_size else 0], group, g)
                pos = (assigned > 0).nonzero().squeeze(1)
                neg = (assigned == 0).nonzero().squeeze(1)
                if pos.numel() > 0:
                    pos_idx = idx[pos]
                    matched = assigned[pos] - 1
                    pa = group[pos]
                    reg = encode(pa, g[matched])
                    bbox_t[pos_idx] = reg
                    bbox_w[pos_idx] = 1.0
                    yaw = limit_period(reg[:, 6] + pa[:, 6] - self.o["dir_offset"],
                                       self.o["dir_limit_offset"], 2 * math.pi)
                    dir_t[pos_idx] = torch.floor(yaw / math.pi).long().clamp(0, 1)
                    dir_w[pos_idx] = 1.0
                    labels[pos_idx] = gl[matched]
                    label_w[pos_idx] = pos_w
                    num_pos += pos.numel()
                if neg.numel() > 0:
                    label_w[idx[neg]] = 1.0
            num_total_pos += max(num_pos, 1)
            for key, v in zip(out, (labels, label_w, bbox_t, bbox_w, dir_t, dir_w)):
                out[key].append(v)
        result = {k: torch.stack(v) for k, v in out.items()}
        result["num_total_pos"] = num_total_pos
        Anchor3DHead.assign_wall += time.perf_counter() - t0
        Anchor3DHead.assign_cpu += time.thread_time() - c0
        return result

    def loss(self, cls, reg, dir_pred, gt_boxes, gt_labels):
        c = self.o["num_classes"]
        anchors = grid_anchors(self.o["anchor_generator"], cls.shape[2], cls.shape[3])
        t = self.targets(anchors, gt_boxes, gt_labels)
        avg = float(t["num_total_pos"])
        labels = t["labels"].reshape(-1)
        losses = {"loss_cls": focal_loss(cls.permute(0, 2, 3, 1).reshape(-1, c), labels,
                                         t["label_w"].reshape(-1), avg, self.o["loss_cls"])}
        pos = ((labels >= 0) & (labels < c)).nonzero().squeeze(1)
        pos_pred = reg.permute(0, 2, 3, 1).reshape(-1, 7)[pos]
        pos_dir = dir_pred.permute(0, 2, 3, 1).reshape(-1, 2)[pos] if dir_pred is not None \
            else None
        if pos.numel() > 0:
            target = t["bbox_t"].reshape(-1, 7)[pos]
            weight = t["bbox_w"].reshape(-1, 7)[pos]
            if self.train_cfg["code_weight"]:
                weight = weight * torch.tensor(self.train_cfg["code_weight"])
            pred = pos_pred
            if self.o["diff_rad_by_sin"]:
                a, b = pred[:, 6:7], target[:, 6:7]
                pred = torch.cat([pred[:, :6], torch.sin(a) * torch.cos(b), pred[:, 7:]], dim=-1)
                target = torch.cat([target[:, :6], torch.cos(a) * torch.sin(b), target[:, 7:]],
                                   dim=-1)
            losses["loss_bbox"] = smooth_l1(pred, target, weight, avg, self.o["loss_bbox"])
            if pos_dir is not None:
                losses["loss_dir"] = dir_cross_entropy(
                    pos_dir, t["dir_t"].reshape(-1)[pos], t["dir_w"].reshape(-1)[pos], avg,
                    self.o["loss_dir"])
        else:
            # Zero losses that still reach every parameter (DDP needs them all in the graph).
            losses["loss_bbox"] = pos_pred.sum()
            if pos_dir is not None:
                losses["loss_dir"] = pos_dir.sum()
        return losses


class PointPillars(nn.Module):
    def __init__(self, spec):
        super().__init__()
        m = spec["model"]
        self.voxel_encoder = PillarFeatureNet(m["voxel_encoder"])
        self.middle_encoder = PointPillarsScatter(m["middle_encoder"])
        self.backbone = SECOND(m["backbone"])
        self.neck = SECONDFPN(m["neck"])
        self.bbox_head = Anchor3DHead(m["bbox_head"], m["train_cfg"])

    def head_outputs(self, voxels, num_points, coors, batch_size):
        pillars = self.voxel_encoder(voxels, num_points, coors)
        canvas = self.middle_encoder(pillars, coors, batch_size)
        return self.bbox_head(self.neck(self.backbone(canvas)))

    def forward(self, voxels, num_points, coors, gt_boxes, gt_labels):
        """Training losses (what DDP wraps: mmdet3d's forward(mode='loss'))."""
        cls, reg, dir_pred = self.head_outputs(voxels, num_points, coors, len(gt_boxes))
        return self.bbox_head.loss(cls, reg, dir_pred, gt_boxes, gt_labels)

    def num_parameters(self):
        return sum(p.numel() for p in self.parameters())
