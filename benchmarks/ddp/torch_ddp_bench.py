"""Training-step throughput of PyTorch's DistributedDataParallel (Gloo, CPU), the reference
half of benchmarks/ddp/run. Same network, data, optimizer and timing as ddp_bench.cpp.
Started by torchrun (RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT), or alone with --no-ddp."""
import argparse
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F


def make_net():
    widths = [512, 1024, 1024, 1024, 512]
    layers = []
    for a, b in zip(widths, widths[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    layers.append(nn.Linear(512, 10))
    return nn.Sequential(*layers)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--iters", type=int, default=60)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--no-ddp", action="store_true")
    args = p.parse_args()
    torch.set_num_threads(1)
    rank = int(os.environ.get("RANK", "0"))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    torch.manual_seed(0)
    net = make_net()
    model = net
    if not args.no_ddp:
        dist.init_process_group("gloo")
        model = nn.parallel.DistributedDataParallel(net)
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    gen = torch.Generator().manual_seed(1000 + rank)
    xs = [torch.randn(args.batch, 512, generator=gen) for _ in range(8)]
    ys = [torch.randint(10, (args.batch,), generator=gen) for _ in range(8)]
    start = cpu_start = 0.0
    fwd = bwd = opt_t = 0.0
    for it in range(args.warmup + args.iters):
        if it == args.warmup:
            if not args.no_ddp:
                dist.barrier()
            start = time.perf_counter()
            cpu_start = time.process_time()
            fwd = bwd = opt_t = 0.0
        t0 = time.perf_counter()
        opt.zero_grad()
        loss = F.cross_entropy(model(xs[it % 8]), ys[it % 8])
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        opt.step()
        t3 = time.perf_counter()
        fwd, bwd, opt_t = fwd + t1 - t0, bwd + t2 - t1, opt_t + t3 - t2
    if not args.no_ddp:
        dist.barrier()
    secs = time.perf_counter() - start
    cpu = time.process_time() - cpu_start
    if rank == 0:
        ms = 1e3 / args.iters
        print(f"torch world={world} batch={args.batch} iters={args.iters}: {secs:.3f} s; per step: "
              f"forward {fwd * ms:.1f} ms, backward {bwd * ms:.1f} ms, optimizer {opt_t * ms:.1f} ms")
        print(f"ITERS_PER_S {args.iters / secs:.4f}")
        print(f"CPU_MS_PER_ITER {1e3 * cpu / args.iters:.3f}")
    if not args.no_ddp:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
