#!/usr/bin/env bash
# Checks that the CUDA kernels are compiled for every GPU the project supports: configures a
# CUDA tree (build-cuda-archs, beside build/) with the project's default
# DDP3D_CUDA_ARCHITECTURES, builds only the kernel libraries (ddp3d_ops_cuda, ddp3d_data_cuda)
# and fails unless the object of every tracked .cu file holds an sm_80, sm_86, sm_89 and sm_90
# cubin (A100, A10G/A40, L4/L40S, H100/H200) and compute_90 PTX (JIT-compiled by the driver on
# newer GPUs), as listed by cuobjdump. No GPU needed.
#
#   bash tests/build/cuda_architectures.sh
#   DDP3D_CUDA_ARCHITECTURES=90 bash tests/build/cuda_architectures.sh   # another list: fails
#   bash tests/build/cuda_architectures.sh --build-only   # the tree only (tools/prebuild_test_parts.sh)
#
# The toolkit comes from tools/cuda_toolkit.sh (cached under ~/.cache/ddp3d; $DDP3D_CUDA_ROOT
# if set). The build runs at nice 19: it is not timing-sensitive, the tests beside it are.
# nvcc runs under ccache (the root CMakeLists.txt), so a cold tree with a warm cache
# is quick, and a warm tree only re-runs CMake. The cached DDP3D_CUDA_ARCHITECTURES is dropped
# on every run so that a changed default in cmake/Torch.cmake is what gets checked.
# Environment: DDP3D_CUDA_ARCHS_BUILD_DIR, DDP3D_JOBS (default 2), DDP3D_VENV.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="${DDP3D_CUDA_ARCHS_BUILD_DIR:-$ROOT/build-cuda-archs}"
VENV="${DDP3D_VENV:-${DDP3D_CACHE:-$HOME/.cache/ddp3d}/venv-torch-${DDP3D_TORCH_VERSION:-2.15.0}}"
TARGETS=(ddp3d_ops_cuda ddp3d_data_cuda)
EXPECT_ELF=(sm_80 sm_86 sm_89 sm_90)
EXPECT_PTX=(sm_90) # cuobjdump names compute_90 PTX after the architecture: "<file>.sm_90.ptx"
build_only=0
case "${1:-}" in
  "") ;;
  --build-only) build_only=1 ;;
  *) echo "usage: $0 [--build-only]" >&2; exit 2 ;;
esac

mkdir -p "$BUILD"
# One run per tree at a time (two ninjas in one tree corrupt it).
exec 8>"$BUILD/.ddp3d-test.lock"
flock 8
start=$(date +%s)
say() { printf '[cuda-archs] %s (%d s)\n' "$*" "$(($(date +%s) - start))" >&2; }
fail() { say "FAIL: $*"; exit 1; }

cuda_root="${DDP3D_CUDA_ROOT:-}"
[[ -n "$cuda_root" ]] || cuda_root="$(bash "$ROOT/tools/cuda_toolkit.sh")"
cuobjdump="$cuda_root/bin/cuobjdump"
[[ -x "$cuobjdump" ]] || fail "no $cuobjdump (tools/cuda_toolkit.sh installs it)"
say "toolkit $cuda_root"

if [[ -n "${DDP3D_CUDA_ARCHITECTURES:-}" ]]; then
  arch_arg=("-DDDP3D_CUDA_ARCHITECTURES=$DDP3D_CUDA_ARCHITECTURES")
else
  arch_arg=(-UDDP3D_CUDA_ARCHITECTURES)
fi
# Worker only, no tests: the kernels need LibTorch and the toolkit, nothing else.
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDDP3D_WITH_CUDA=ON \
  -DDDP3D_CUDA_ROOT="$cuda_root" -DDDP3D_PYTHON="$VENV/bin/python" \
  -DDDP3D_BUILD_OPERATOR=OFF -DDDP3D_BUILD_TESTS=OFF -DDDP3D_WARNINGS_AS_ERRORS=OFF \
  "${arch_arg[@]}" >"$BUILD/ddp3d-configure.log" 2>&1 ||
  { tail -30 "$BUILD/ddp3d-configure.log" >&2; fail "configure (log: $BUILD/ddp3d-configure.log)"; }
archs=$(sed -n 's/^DDP3D_CUDA_ARCHITECTURES:STRING=//p' "$BUILD/CMakeCache.txt")
say "configured $BUILD, DDP3D_CUDA_ARCHITECTURES=$archs"

nice -n 19 cmake --build "$BUILD" -j "${DDP3D_JOBS:-2}" --target "${TARGETS[@]}" >&2 ||
  fail "building ${TARGETS[*]}"
say "built ${TARGETS[*]}"
((build_only == 0)) || exit 0

# Every tracked kernel file must have been built by one of TARGETS: a new .cu file in another
# target fails here until TARGETS lists it.
mapfile -t sources < <(cd "$ROOT" && git ls-files '*.cu')
((${#sources[@]})) || fail "no tracked .cu files under $ROOT"
bad=0
for src in "${sources[@]}"; do
  objs=()
  for target in "${TARGETS[@]}"; do
    while IFS= read -r o; do objs+=("$o"); done < <(
      find "$BUILD/$(dirname "$(dirname "$src")")" -path "*/CMakeFiles/$target.dir/*" \
        -name "$(basename "$src").o" 2>/dev/null)
  done
  if ((${#objs[@]} != 1)); then
    say "$src: ${#objs[@]} objects in ${TARGETS[*]} (expected 1)"
    bad=1
    continue
  fi
  obj="${objs[0]}"
  elf=$("$cuobjdump" --list-elf "$obj" 2>&1 || true)
  ptx=$("$cuobjdump" --list-ptx "$obj" 2>&1 || true)
  # "ELF file 1: nms_rotated_bev.cu.1.sm_80.cubin", "PTX file 1: nms_rotated_bev.cu.1.sm_90.ptx"
  have_elf=$({ grep -oE '\.sm_[0-9]+[af]?\.cubin' <<<"$elf" || true; } |
    sed 's/^\.//; s/\.cubin$//' | sort -u | xargs)
  have_ptx=$({ grep -oE '\.sm_[0-9]+[af]?\.ptx' <<<"$ptx" || true; } |
    sed 's/^\.//; s/\.ptx$//' | sort -u | xargs)
  missing=()
  for a in "${EXPECT_ELF[@]}"; do grep -qw "$a" <<<"$have_elf" || missing+=("$a cubin"); done
  for a in "${EXPECT_PTX[@]}"; do
    grep -qw "$a" <<<"$have_ptx" || missing+=("compute_${a#sm_} PTX")
  done
  if ((${#missing[@]})); then
    list=$(printf '%s, ' "${missing[@]}")
    ptx_names=${have_ptx//sm_/compute_}
    say "$src: missing ${list%, } (cubins: ${have_elf:-none}; PTX: ${ptx_names:-none})"
    bad=1
  else
    say "$src: cubins $have_elf, PTX ${have_ptx//sm_/compute_}"
  fi
done
((bad == 0)) || fail "the kernels lack architectures (DDP3D_CUDA_ARCHITECTURES=$archs)"
say "PASS: ${#sources[@]} kernel files carry ${EXPECT_ELF[*]} cubins and compute_90 PTX"
