#!/usr/bin/env bash
# mmdetection3d's tools/dist_test.sh, for ddp3d:
#   [NNODES=.. NODE_RANK=.. MASTER_ADDR=.. PORT=..] bash tools/dist_test.sh CONFIG CHECKPOINT GPUS [args...]
set -euo pipefail
if [[ $# -lt 3 ]]; then
  echo "usage: [NNODES=1 NODE_RANK=0 MASTER_ADDR=127.0.0.1 PORT=29500] $0 CONFIG CHECKPOINT GPUS [args...]" >&2
  exit 2
fi
CONFIG=$1
CHECKPOINT=$2
GPUS=$3
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
PORT=${PORT:-29500}
MASTER_ADDR=${MASTER_ADDR:-"127.0.0.1"}
source "$(dirname "${BASH_SOURCE[0]}")/ddp3d_binary.sh"

GPUS=$GPUS exec "$DDP3D_BIN" launch \
  --nnodes="$NNODES" \
  --node-rank="$NODE_RANK" \
  --master-addr="$MASTER_ADDR" \
  --nproc-per-node="$(( GPUS > 0 ? GPUS : 1 ))" \
  --master-port="$PORT" \
  -- "$DDP3D_BIN" test "$CONFIG" "$CHECKPOINT" --launcher pytorch "${@:4}"
