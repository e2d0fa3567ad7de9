#!/usr/bin/env bash
# The GPU check: builds ddp3d with CUDA, runs the `gpu`-labelled tests (CUDA voxelization,
# rotated IoU and NMS, each against the CPU implementation) and a short single-GPU training
# run, writing every log to $OUT.
#
#   bash tools/gpu_check.sh prepare   # on a machine with the package registries: puts the
#                                     # build dependencies a GPU image may lack in .gpu-carry/
#   bash tools/gpu_check.sh [run]     # on the GPU machine (carry .gpu-carry along)
#   bash tools/gpu_check.sh configure # only finds LibTorch, the toolkit and the dependencies
#                                     # and configures: a cheap check of a machine
#
# What it uses, in order of preference:
#   - LibTorch: $DDP3D_PYTHON, else the project venv (tools/setup.sh), else `python3`'s torch
#     (a GPU image without the registries has its own PyTorch; the code must build against it);
#   - CUDA toolkit: $DDP3D_CUDA_ROOT, else tools/cuda_toolkit.sh when the project venv is there,
#     else the machine's nvcc (PATH or /usr/local/cuda);
#   - yaml-cpp and GoogleTest: the Debian packages in .gpu-carry/debs, unpacked under /tmp,
#     else the system's. The operator (cpprestsdk) is not built: -DDDP3D_BUILD_OPERATOR=OFF.
# Environment: OUT (logs; default work_dirs/gpu-check), DDP3D_BUILD_DIR (default build-gpu),
# DDP3D_JOBS, DDP3D_GPU_TRAIN_SECONDS (time limit of the training run, default 120),
# DDP3D_GPU_TRAIN_CONFIG, DDP3D_GPU_TRAIN_OPTIONS (its --cfg-options).
# Exit status: non-zero when the build of the tests or any gpu test failed; the training run is
# reported in $OUT/summary.txt without failing the check (it depends on the detector's wiring).
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CARRY="$ROOT/.gpu-carry"
CARRY_DEBS=(libyaml-cpp-dev libyaml-cpp0.7 libgtest-dev libgmock-dev)

say() { printf '[gpu-check] %s\n' "$*" | tee -a "$OUT/summary.txt" >&2; }

prepare() {
  mkdir -p "$CARRY/debs"
  (cd "$CARRY/debs" && apt-get download "${CARRY_DEBS[@]}") || {
    echo "apt-get download failed (run 'apt-get update' first?)" >&2
    exit 1
  }
  du -sh "$CARRY" >&2
  echo "carry this folder to the GPU machine: .gpu-carry (it is git-ignored)" >&2
}

MODE="${1:-run}"
if [[ "$MODE" == "prepare" ]]; then
  prepare
  exit 0
fi
[[ "$MODE" == "run" || "$MODE" == "configure" ]] || { echo "usage: $0 [prepare|run|configure]" >&2; exit 2; }

OUT="${OUT:-$ROOT/work_dirs/gpu-check}"
mkdir -p "$OUT"
: >"$OUT/summary.txt"
: >"$OUT/train.log"
BUILD_DIR="${DDP3D_BUILD_DIR:-$ROOT/build-gpu}"
JOBS="${DDP3D_JOBS:-$(nproc)}"
DDP3D_CACHE="${DDP3D_CACHE:-$HOME/.cache/ddp3d}"
VENV="${DDP3D_VENV:-$DDP3D_CACHE/venv-torch-${DDP3D_TORCH_VERSION:-2.15.0}}"
status=0
start=$(date +%s)
elapsed() { echo "$(($(date +%s) - start)) s"; }

# --- 1. The machine. ----------------------------------------------------------------------
{
  nvidia-smi || true
  command -v nvcc && nvcc --version
  g++ --version | head -1
  cmake --version | head -1
} >"$OUT/env.log" 2>&1

if [[ -z "${DDP3D_PYTHON:-}" ]]; then
  if [[ -x "$VENV/bin/python" ]]; then DDP3D_PYTHON="$VENV/bin/python"; else DDP3D_PYTHON="$(command -v python3)"; fi
fi
torch_info=$("$DDP3D_PYTHON" -c 'import torch; print(torch.__version__, "cuda", torch.version.cuda, "gpus", torch.cuda.device_count())' 2>&1 | tail -1)
say "LibTorch via $DDP3D_PYTHON: $torch_info"

if [[ -z "${DDP3D_CUDA_ROOT:-}" ]]; then
  if [[ -x "$VENV/bin/python" ]]; then
    DDP3D_CUDA_ROOT="$(bash "$ROOT/tools/cuda_toolkit.sh")" || { say "FAIL tools/cuda_toolkit.sh"; exit 1; }
  else
    nvcc_bin="$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)"
    [[ -x "$nvcc_bin" ]] || { say "FAIL no nvcc on PATH or in /usr/local/cuda"; exit 1; }
    DDP3D_CUDA_ROOT="$(dirname "$(dirname "$(readlink -f "$nvcc_bin")")")"
  fi
fi
say "CUDA toolkit: $DDP3D_CUDA_ROOT ($("$DDP3D_CUDA_ROOT/bin/nvcc" --version | tail -1))"

prefix_path=""
if compgen -G "$CARRY/debs/*.deb" >/dev/null; then
  deps=/tmp/ddp3d-gpu-deps
  mkdir -p "$deps"
  for deb in "$CARRY"/debs/*.deb; do dpkg-deb -x "$deb" "$deps"; done
  prefix_path="$deps/usr"
  say "yaml-cpp and GoogleTest from .gpu-carry/debs"
fi

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

# --- 2. Configure and build. -------------------------------------------------------------
if ! cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DDDP3D_WITH_CUDA=ON -DDDP3D_CUDA_ROOT="$DDP3D_CUDA_ROOT" -DDDP3D_PYTHON="$DDP3D_PYTHON" \
  -DDDP3D_BUILD_OPERATOR=OFF -DDDP3D_WARNINGS_AS_ERRORS=OFF \
  ${prefix_path:+-DCMAKE_PREFIX_PATH="$prefix_path"} "${launcher[@]}" \
  >"$OUT/configure.log" 2>&1; then
  say "FAIL configure (see configure.log) after $(elapsed)"
  tail -30 "$OUT/configure.log" >&2
  exit 1
fi
say "configured after $(elapsed)"
[[ "$MODE" == "configure" ]] && exit 0

# The tests first: a failure in the rest of the worker must not hide the kernels' results.
if cmake --build "$BUILD_DIR" -j "$JOBS" --target data_cuda_tests ddp3d_ops_cuda_tests \
  >"$OUT/build.log" 2>&1; then
  say "built the gpu tests after $(elapsed)"
else
  say "FAIL building the gpu tests (see build.log) after $(elapsed)"
  grep -E "error|Error" "$OUT/build.log" | head -20 >&2
  status=1
fi

# --- 3. The gpu tests, before building the binary, so that their results come back first. --
if ((status == 0)) || [[ -x "$BUILD_DIR/tests/unit/data/data_cuda_tests" ]] ||
  [[ -x "$BUILD_DIR/tests/unit/ops/ddp3d_ops_cuda_tests" ]]; then
  if ctest --test-dir "$BUILD_DIR" -L gpu --output-on-failure --timeout 300 \
    --output-junit "$OUT/gpu-tests.xml" >"$OUT/gpu-tests.log" 2>&1; then
    say "PASS gpu tests: $(grep -E 'tests passed' "$OUT/gpu-tests.log")"
  else
    say "FAIL gpu tests: $(grep -E 'tests passed|tests failed' "$OUT/gpu-tests.log")"
    status=1
  fi
fi

# --- 4. The worker binary. --------------------------------------------------------------------
if cmake --build "$BUILD_DIR" -j "$JOBS" --target ddp3d >>"$OUT/build.log" 2>&1; then
  say "built ddp3d after $(elapsed)"
  have_binary=1
else
  say "FAIL building ddp3d (see build.log) after $(elapsed)"
  have_binary=0
  status=1
fi

# --- 5. A short single-GPU training run (GPUS=1: NCCL, the rank on cuda:0). ----------------
# train_run LABEL CONFIG OPTIONS: appends to train.log, reports s/iter from scalars.json.
train_run() {
  local label=$1 config=$2 options=$3 work="/tmp/ddp3d-gpu-train-$1" t0 rc secs scalars
  rm -rf "$work"
  t0=$(date +%s)
  echo "=== $label: $config --cfg-options $options" >>"$OUT/train.log"
  # shellcheck disable=SC2086  # the options are one word each
  (cd "$ROOT" && PORT="${PORT:-29533}" DDP3D_BUILD_DIR="$BUILD_DIR" \
    timeout "${DDP3D_GPU_TRAIN_SECONDS:-120}" bash tools/dist_train.sh "$config" \
    "${DDP3D_GPU_TRAIN_GPUS:-1}" --work-dir "$work" --cfg-options $options) >>"$OUT/train.log" 2>&1
  rc=$?
  secs=$(($(date +%s) - t0))
  scalars=$(find "$work" -name scalars.json 2>/dev/null | head -1)
  if [[ -n "$scalars" ]]; then
    cp "$scalars" "$OUT/train-scalars.json"
    # Mean seconds per iteration over the logged iterations after the first (CUDA warm-up).
    "$DDP3D_PYTHON" - "$scalars" "$label" 2>&1 <<'EOF' | tee -a "$OUT/summary.txt" >&2
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
rows = [r for r in rows if "time" in r and "loss" in r]
times = [r["time"] for r in rows[1:]] or [r["time"] for r in rows]
if times:
    print("[gpu-check] %s: %d logged iterations, mean %.4f s/iter (first excluded), "
          "loss %s -> %s" % (sys.argv[2], len(rows), sum(times) / len(times),
                             rows[0]["loss"], rows[-1]["loss"]))
EOF
  fi
  if ((rc == 0)); then
    say "PASS $label training run in ${secs} s"
  elif ((rc == 124)); then
    say "$label training run stopped at its ${DDP3D_GPU_TRAIN_SECONDS:-120} s limit (timing above)"
  else
    say "$label training run FAILED ($rc) in ${secs} s: $(grep -iE 'error|unknown' "$OUT/train.log" | grep -vE 'error:\s*$' | head -1)"
  fi
  return "$rc"
}

if ((have_binary)); then
  data=/tmp/ddp3d-gpu-data
  train_run pointpillars \
    "${DDP3D_GPU_TRAIN_CONFIG:-configs/pointpillars/pointpillars_demo_synthetic_car.yaml}" \
    "${DDP3D_GPU_TRAIN_OPTIONS:-train_cfg.max_epochs=2 train_cfg.val_interval=2 train_dataloader.dataset.data_root=$data val_dataloader.dataset.data_root=$data test_dataloader.dataset.data_root=$data}"
  if grep -q "unknown model type 'PointPillars'" "$OUT/train.log"; then
    # The detector is not wired into the engine in this build: still train on the GPU, with
    # the engine's toy model, so that NCCL and the CUDA device path are exercised.
    say "PointPillars is not registered in this build; training the toy model on the GPU instead"
    train_run toy configs/toy/toy_regression_2proc.yaml \
      "train_cfg.max_epochs=2 env_cfg.dist_cfg.backend=auto randomness.deterministic=false"
  fi
fi

say "done after $(elapsed), status $status"
exit "$status"
