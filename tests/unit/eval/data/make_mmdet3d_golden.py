#!/usr/bin/env python3
"""Writes the cross-check fixture for kitti_eval_test: a random KITTI-style scene (ground
truth of every class incl. Van / Person_sitting / Truck / DontCare, jittered detections,
false positives) and what mmdetection3d's own kitti_eval reports for it.

Not run by the tests (it needs mmdetection3d's eval.py); the outputs are committed:
  scene.txt            F <frame_id> / G|D <type> <truncated> <occluded> <alpha> <bbox x4>
                       <h w l> <x y z> <rotation_y> <score>   (KITTI label field order)
  mmdet3d_metrics.txt  <metric name> <value>, mmdet3d's ret_dict
  mmdet3d_table.txt    mmdet3d's printed result string

Usage: make_mmdet3d_golden.py EVAL_PY OUT_DIR [--seed 7] [--frames 80] [--scales 0.1,0.5,1.0]
EVAL_PY is mmdet3d/evaluation/functional/kitti_utils/eval.py (its rotate_iou_cpu.py next to
it); when numba is missing, install a stand-in whose jit is the identity (pure Python).
"""
import argparse
import importlib.util
import math
import os
import random
import sys

import numpy as np


DIMS = {'Car': (1.5, 1.6, 3.9), 'Van': (2.2, 1.9, 5.0), 'Truck': (3.2, 2.5, 10.0),
        'Pedestrian': (1.75, 0.6, 0.8), 'Person_sitting': (1.3, 0.6, 0.9), 'Cyclist': (1.7, 0.6, 1.8)}
TYPES = ['Car'] * 5 + ['Pedestrian'] * 2 + ['Cyclist'] * 2 + ['Van', 'Person_sitting', 'Truck', 'DontCare']

def bbox_of(x, y, z, h, w, l):
    f = 720.0
    cu, cv = 610.0, 175.0
    hp, wp = f * h / z, f * max(w, l) / z
    u = cu + f * x / z
    return [u - wp / 2, cv + f * (y - h) / z, u + wp / 2, cv + f * y / z]

def make_obj(rng, t):
    if t == 'DontCare':
        u = rng.uniform(0, 1100); v = rng.uniform(120, 250)
        return dict(type=t, trunc=-1, occ=-1, alpha=-10, bbox=[u, v, u + rng.uniform(20, 120), v + rng.uniform(15, 60)],
                    dims=[-1, -1, -1], loc=[-1000, -1000, -1000], ry=-10, score=0)
    h, w, l = DIMS[t]
    h *= rng.uniform(0.9, 1.1); w *= rng.uniform(0.9, 1.1); l *= rng.uniform(0.9, 1.1)
    z = rng.uniform(5, 55); x = rng.uniform(-0.4, 0.4) * z; y = rng.uniform(1.5, 1.9)
    ry = rng.uniform(-math.pi, math.pi)
    return dict(type=t, trunc=rng.choice([0, 0, 0.1, 0.2, 0.4, 0.6]), occ=rng.choice([0, 0, 1, 2, 3]),
                alpha=ry - math.atan2(x, z), bbox=bbox_of(x, y, z, h, w, l), dims=[h, w, l], loc=[x, y, z], ry=ry, score=0)

def jitter(rng, g, scale):
    d = dict(g)
    d['loc'] = [g['loc'][0] + rng.gauss(0, 0.3 * scale), g['loc'][1] + rng.gauss(0, 0.1 * scale), g['loc'][2] + rng.gauss(0, 0.4 * scale)]
    d['dims'] = [v * (1 + rng.gauss(0, 0.05 * scale)) for v in g['dims']]
    d['ry'] = g['ry'] + rng.gauss(0, 0.15 * scale) + (math.pi if rng.random() < 0.1 else 0)
    d['alpha'] = g['alpha'] + (d['ry'] - g['ry'])
    d['bbox'] = [v + rng.gauss(0, 4 * scale) for v in g['bbox']]
    d['trunc'] = 0; d['occ'] = 0
    d['score'] = rng.random()
    return d

def scene(seed, nframes):
    rng = random.Random(seed)
    frames = []
    for i in range(nframes):
        gts = [make_obj(rng, rng.choice(TYPES)) for _ in range(rng.randint(1, 9))]
        if all(g['type'] == 'DontCare' for g in gts):
            gts.append(make_obj(rng, 'Car'))
        dets = []
        for g in gts:
            if g['type'] in ('DontCare', 'Truck') or rng.random() < 0.25:
                continue
            d = jitter(rng, g, rng.choice(SCALES))
            if d['type'] == 'Van': d['type'] = 'Car'
            if d['type'] == 'Person_sitting': d['type'] = 'Pedestrian'
            dets.append(d)
        for _ in range(rng.randint(0, 3)):
            d = jitter(rng, make_obj(rng, rng.choice(['Car', 'Pedestrian', 'Cyclist'])), 1)
            dets.append(d)
        frames.append((i, gts, dets))
    return frames

def to_anno(objs, det):
    n = len(objs)
    a = dict(name=np.array([o['type'] for o in objs]),
             truncated=np.array([o['trunc'] for o in objs], dtype=np.float64),
             occluded=np.array([o['occ'] for o in objs], dtype=np.int64),
             alpha=np.array([o['alpha'] for o in objs], dtype=np.float64),
             bbox=np.array([o['bbox'] for o in objs], dtype=np.float64).reshape(n, 4),
             # mmdet3d stores dimensions as (l, h, w)
             dimensions=np.array([[o['dims'][2], o['dims'][0], o['dims'][1]] for o in objs], dtype=np.float64).reshape(n, 3),
             location=np.array([o['loc'] for o in objs], dtype=np.float64).reshape(n, 3),
             rotation_y=np.array([o['ry'] for o in objs], dtype=np.float64))
    if det:
        a['score'] = np.array([o['score'] for o in objs], dtype=np.float64)
    return a


def rounded(o):
    """4 decimals, so the text file carries exactly what both evaluators see."""
    r = dict(o)
    for k in ('trunc', 'alpha', 'ry', 'score'):
        r[k] = round(float(o[k]), 4)
    for k in ('bbox', 'dims', 'loc'):
        r[k] = [round(float(v), 4) for v in o[k]]
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('eval_py')
    ap.add_argument('out_dir')
    ap.add_argument('--seed', type=int, default=7)
    ap.add_argument('--frames', type=int, default=80)
    ap.add_argument('--scales', default='0.1,0.5,1.0')
    args = ap.parse_args()
    global SCALES
    SCALES = [float(v) for v in args.scales.split(',')]

    sys.path.insert(0, os.path.dirname(os.path.abspath(args.eval_py)))
    spec = importlib.util.spec_from_file_location('mmdet3d_kitti_eval', args.eval_py)
    ref = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ref)

    frames = [(i, [rounded(o) for o in g], [rounded(o) for o in d])
              for i, g, d in scene(args.seed, args.frames)]
    os.makedirs(args.out_dir, exist_ok=True)
    with open(os.path.join(args.out_dir, 'scene.txt'), 'w') as f:
        for i, gts, dets in frames:
            f.write(f'F {i}\n')
            for tag, objs in (('G', gts), ('D', dets)):
                for o in objs:
                    vals = [o['trunc'], o['occ'], o['alpha'], *o['bbox'], *o['dims'], *o['loc'],
                            o['ry'], o['score']]
                    f.write(' '.join([tag, o['type']] + [str(v) for v in vals]) + '\n')
    gt = [to_anno(g, False) for _, g, _ in frames]
    dt = [to_anno(d, True) for _, _, d in frames]
    table, metrics = ref.kitti_eval(gt, dt, ['Car', 'Pedestrian', 'Cyclist'],
                                    eval_types=['bbox', 'bev', '3d'])
    with open(os.path.join(args.out_dir, 'mmdet3d_metrics.txt'), 'w') as f:
        for k in sorted(metrics):
            f.write(f'{k} {float(metrics[k]):.17g}\n')
    with open(os.path.join(args.out_dir, 'mmdet3d_table.txt'), 'w') as f:
        f.write(table)


if __name__ == '__main__':
    main()
