"""PointPillars training-step throughput of a Python PyTorch implementation, stage by stage: the
reference half of benchmarks/pointpillars/run. Same spec (from `pointpillars_bench
--dump-spec`), data files, frame order, augmentation draws, stages and timing as
pointpillars_bench.cpp; torch's DistributedDataParallel over Gloo when started by torchrun.

  torch_pointpillars_bench.py --spec SPEC.json --data ROOT [--iters N] [--warmup N] [--no-ddp]
                              [--no-shuffle] [--profile TRACE.json]

Rank 0 prints `STAGE_MS <stage> <wall ms> <main-thread CPU ms>` per iteration,
`ITERS_PER_S <x>` and checks.
"""
import argparse
import json
import math
import os
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_kitti_pipeline as data  # noqa: E402
from torch_pointpillars import Anchor3DHead, PointPillars, grid_anchors  # noqa: E402


class Mark:
    """A point in time on the wall clock and on this thread's CPU clock (see stage_clock.h)."""

    def __init__(self):
        self.wall = time.perf_counter()
        self.cpu = time.thread_time()


class StageClock:
    def __init__(self):
        self.wall = {}
        self.cpu = {}

    def add(self, stage, mark, wall=None, cpu=None):
        if mark is not None:
            wall, cpu = time.perf_counter() - mark.wall, time.thread_time() - mark.cpu
        self.wall[stage] = self.wall.get(stage, 0.0) + wall
        if cpu is not None:
            self.cpu[stage] = self.cpu.get(stage, 0.0) + cpu


def prepare_batch(ds, spec, seed, it, rank, world, clock):
    batch, pcr = spec["batch_size"], spec["voxel"]["point_cloud_range"]
    t = Mark()
    frames = [ds.load(data.sample_index(it, rank, world, batch, j, len(ds))) for j in range(batch)]
    clock.add("load", t)
    t = Mark()
    samples = [data.augment(p, b, l, data.draw_augment(seed, it, rank, j, spec["augment"]), pcr)
               for j, (p, b, l) in enumerate(frames)]
    clock.add("pipeline", t)
    t = Mark()
    voxels, coors, num_points = data.collate(
        [data.voxelize(p, spec["voxel"]) for p, _, _ in samples])
    clock.add("voxelize", t)
    return voxels, coors, num_points, [b for _, b, _ in samples], [l for _, _, l in samples]


def count_positives(model, b):
    voxels, coors, num_points, boxes, labels = b
    with torch.no_grad():
        cls, _, _ = model.head_outputs(voxels, num_points, coors, len(boxes))
        head = model.bbox_head
        t = head.targets(grid_anchors(head.o["anchor_generator"], cls.shape[2], cls.shape[3]),
                         boxes, labels)
    c = head.o["num_classes"]
    return int(((t["labels"] >= 0) & (t["labels"] < c)).sum())


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--spec", required=True)
    p.add_argument("--data", required=True)
    p.add_argument("--split", default="train")
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--batch", type=int, default=0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-ddp", action="store_true")
    p.add_argument("--no-shuffle", action="store_true", help="skip PointShuffle (for checks)")
    p.add_argument("--profile", help="rank 0: Chrome trace of the timed iterations")
    args = p.parse_args()
    with open(args.spec) as f:
        spec = json.load(f)
    if args.batch > 0:
        spec["batch_size"] = args.batch
    spec["augment"]["point_shuffle"] = not args.no_shuffle

    torch.set_num_threads(1)
    torch.manual_seed(0)
    net = PointPillars(spec)
    if net.num_parameters() != spec["num_parameters"]:
        raise SystemExit(f"torch reference has {net.num_parameters()} parameters, the C++ model "
                         f"{spec['num_parameters']}: not the same network")
    use_ddp = not args.no_ddp
    rank = int(os.environ.get("RANK", "0")) if use_ddp else 0
    world = int(os.environ.get("WORLD_SIZE", "1")) if use_ddp else 1
    model = net
    if use_ddp:
        dist.init_process_group("gloo")
        model = DistributedDataParallel(net)
    o = spec["optim"]
    optimizer = torch.optim.AdamW(net.parameters(), lr=o["lr"], betas=tuple(o["betas"]),
                                  eps=o["eps"], weight_decay=o["weight_decay"])
    params = list(net.parameters())
    # When the last gradient was accumulated: backward's compute is done, what follows is the
    # wait for DDP's all-reduces and the write-back of the averaged gradients.
    last_grad = [0.0]
    def stamp(_):
        last_grad[0] = time.perf_counter()

    for prm in params:
        prm.register_post_accumulate_grad_hook(stamp)
    ds = data.KittiDataset(args.data, args.split, spec["classes"])
    clock = StageClock()

    if rank == 0:
        print(f"PARAMS {net.num_parameters()}")
        first = prepare_batch(ds, spec, args.seed, 0, 0, world, StageClock())
        print(f"CHECK iteration 0 rank 0: pillars {first[0].shape[0]}, gt boxes "
              f"{sum(l.numel() for l in first[4])}, positive anchors {count_positives(net, first)}")
        v = first[0].double()
        print(f"CHECK_VOXELS iteration 0 rank 0: sum {float(v.sum()):.6f}, sum of squares "
              f"{float((v * v).sum()):.6f}, coors sum {int(first[1].sum())}")
        sys.stdout.flush()

    if args.iters == 0:  # the checks only
        return
    pillars = points = 0
    start = cpu_start = 0.0
    for it in range(args.warmup + args.iters):
        if it == args.warmup:
            if use_ddp:
                dist.barrier()
            clock = StageClock()
            pillars = points = 0
            if args.profile and rank == 0:
                profiler = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU])
                profiler.__enter__()
            start = Mark()
            cpu_start = time.process_time()
        voxels, coors, num_points, boxes, labels = prepare_batch(ds, spec, args.seed, it, rank,
                                                                 world, clock)
        pillars += voxels.shape[0]
        points += int(num_points.sum())

        t = Mark()
        Anchor3DHead.assign_wall = Anchor3DHead.assign_cpu = 0.0
        losses = model(voxels, num_points, coors, boxes, labels)
        loss = sum(losses.values())
        clock.add("forward", t)
        clock.add("assign", None, Anchor3DHead.assign_wall, Anchor3DHead.assign_cpu)

        t = Mark()
        loss.backward()
        done = time.perf_counter()
        if use_ddp:
            clock.add("allreduce_wait", None, done - last_grad[0])
        clock.add("backward", t)

        t = Mark()
        if o["clip_max_norm"] > 0:
            torch.nn.utils.clip_grad_norm_(params, o["clip_max_norm"], 2.0)
        optimizer.step()
        optimizer.zero_grad()
        clock.add("optimizer", t)
        if not math.isfinite(loss.item()):
            raise SystemExit("loss is not finite")
    if use_ddp:
        dist.barrier()
    secs = time.perf_counter() - start.wall
    thread_cpu = time.thread_time() - start.cpu
    if args.profile and rank == 0:
        profiler.__exit__(None, None, None)
        profiler.export_chrome_trace(args.profile)
    cpu = time.process_time() - cpu_start
    if rank == 0:
        ms = 1e3 / args.iters
        print(f"torch world={world} batch={spec['batch_size']} iters={args.iters}: {secs:.3f} s")
        for stage in ("load", "pipeline", "voxelize", "forward", "assign", "backward",
                      "allreduce_wait", "optimizer"):
            print(f"STAGE_MS {stage} {clock.wall.get(stage, 0.0) * ms:.3f} "
                  f"{clock.cpu.get(stage, 0.0) * ms:.3f}")
        print(f"STAGE_MS step {secs * ms:.3f} {thread_cpu * ms:.3f}")
        print(f"PILLARS_PER_ITER {pillars / args.iters:.1f}")
        print(f"POINTS_PER_ITER {points / args.iters:.1f}")
        print(f"ITERS_PER_S {args.iters / secs:.4f}")
        print(f"CPU_MS_PER_ITER {1e3 * cpu / args.iters:.3f}")
    if use_ddp:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
