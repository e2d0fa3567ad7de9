#!/usr/bin/env bash
# The README's main job: sets everything up, then trains on built-in synthetic data with two
# local processes over Gloo — exactly as `tools/dist_train.sh` runs on a cluster node.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/tools/setup.sh"
CONFIG="${DDP3D_DEMO_CONFIG:-$ROOT/configs/toy/toy_regression_2proc.yaml}"
WORK_DIR="${DDP3D_DEMO_WORK_DIR:-$ROOT/work_dirs/demo}"
cd "$ROOT"
PORT="${PORT:-29500}" bash tools/dist_train.sh "$CONFIG" 2 --work-dir "$WORK_DIR" "$@"
echo "[demo] logs, config and checkpoints are in $WORK_DIR" >&2
