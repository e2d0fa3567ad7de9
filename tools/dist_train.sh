#!/usr/bin/env bash
# mmdetection3d's tools/dist_train.sh, for ddp3d:
#   [NNODES=.. NODE_RANK=.. MASTER_ADDR=.. PORT=..] bash tools/dist_train.sh CONFIG GPUS [args...]
# GPUS is processes per node (0 = one CPU process). Extra args go to `ddp3d train`.
set -euo pipefail
if [[ $# -lt 2 ]]; then
  echo "usage: [NNODES=1 NODE_RANK=0 MASTER_ADDR=127.0.0.1 PORT=29500] $0 CONFIG GPUS [args...]" >&2
  exit 2
fi
CONFIG=$1
GPUS=$2
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
PORT=${PORT:-29500}
MASTER_ADDR=${MASTER_ADDR:-"127.0.0.1"}
source "$(dirname "${BASH_SOURCE[0]}")/ddp3d_binary.sh"

# GPUS ranks run on GPUs only where a CUDA build sees them; each rank's first log line says
# where it runs. Without any GPU visible here, say so before starting them.
if (( GPUS > 0 )) && ! { command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; }; then
  echo "dist_train.sh: no CUDA device visible: starting $GPUS CPU processes per node over Gloo" >&2
fi

GPUS=$GPUS exec "$DDP3D_BIN" launch \
  --nnodes="$NNODES" \
  --node-rank="$NODE_RANK" \
  --master-addr="$MASTER_ADDR" \
  --nproc-per-node="$(( GPUS > 0 ? GPUS : 1 ))" \
  --master-port="$PORT" \
  -- "$DDP3D_BIN" train "$CONFIG" --seed 0 --launcher pytorch "${@:3}"
