"""Per-operator self time of two Chrome traces (LibTorch/Kineto profiler: `pointpillars_bench
--profile` and `torch_pointpillars_bench.py --profile`), side by side: where the two
implementations spend their time differently.

  profile_compare.py DDP3D_TRACE TORCH_TRACE [--iters N] [--top K]

Self time = an event's duration minus the time covered by the events nested in it on the same
thread; times are divided by --iters to give ms per iteration.
"""
import argparse
import json
from collections import defaultdict


def self_times(path):
    with open(path) as f:
        trace = json.load(f)
    events = [e for e in trace.get("traceEvents", []) if e.get("ph") == "X" and "dur" in e
              and e.get("cat") in ("cpu_op", "user_annotation", "python_function")]
    by_thread = defaultdict(list)
    for e in events:
        by_thread[(e.get("pid"), e.get("tid"))].append(e)
    totals = defaultdict(float)
    counts = defaultdict(int)
    for evs in by_thread.values():
        evs.sort(key=lambda e: (e["ts"], -e["dur"]))
        stack = []  # [end, name, child time]
        for e in evs:
            while stack and stack[-1][0] <= e["ts"]:
                end, name, child, dur = stack.pop()
                totals[name] += dur - child
                if stack:
                    stack[-1][2] += dur
            stack.append([e["ts"] + e["dur"], e["name"], 0.0, e["dur"]])
            counts[e["name"]] += 1
        while stack:
            end, name, child, dur = stack.pop()
            totals[name] += dur - child
            if stack:
                stack[-1][2] += dur
    return totals, counts


def main():
    p = argparse.ArgumentParser()
    p.add_argument("ddp3d")
    p.add_argument("torch")
    p.add_argument("--iters", type=int, default=1)
    p.add_argument("--top", type=int, default=25)
    args = p.parse_args()
    (a, ca), (b, cb) = self_times(args.ddp3d), self_times(args.torch)
    scale = 1e-3 / args.iters  # us -> ms per iteration
    names = sorted(set(a) | set(b), key=lambda n: -max(a.get(n, 0), b.get(n, 0)))
    print(f"self time, ms per iteration ({args.iters} iterations)")
    print(f"  {'operator':44s} {'ddp3d':>9s} {'calls':>6s} {'torch':>9s} {'calls':>6s}")
    for n in names[:args.top]:
        print(f"  {n[:44]:44s} {a.get(n, 0) * scale:9.2f} {ca.get(n, 0) // args.iters:6d} "
              f"{b.get(n, 0) * scale:9.2f} {cb.get(n, 0) // args.iters:6d}")
    print(f"  {'total (profiled ops)':44s} {sum(a.values()) * scale:9.2f} {'':6s} "
          f"{sum(b.values()) * scale:9.2f}")


if __name__ == "__main__":
    main()
