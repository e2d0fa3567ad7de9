#!/usr/bin/env bash
# Installs what ddp3d needs and builds it. Idempotent: each step is skipped when its result
# is already there, and downloads are cached under $DDP3D_CACHE (default ~/.cache/ddp3d).
#
#   bash tools/setup.sh            # packages + LibTorch venv + configure + build (everything the
#                                  # tests need: operator, tests, cluster and image tooling)
#   bash tools/setup.sh --demo     # only what the demo runs: the build packages, LibTorch's CPU
#                                  # libraries (no CUDA wheels: 1.3 GB instead of 5.4 GB) and the
#                                  # `ddp3d` binary; a later full run adds the rest in place
#   bash tools/setup.sh --worker   # the build packages, the whole torch wheel and `ddp3d` alone
#                                  # (what an image needs; tools/build_images.sh --cuda)
#   DDP3D_BUILD_DIR=build-x bash tools/setup.sh
#   DDP3D_WITH_CUDA=1 DDP3D_BUILD_DIR=build-cuda bash tools/setup.sh   # + CUDA/NCCL (compiles
#                                                  # without a GPU; tools/cuda_toolkit.sh)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DDP3D_CACHE="${DDP3D_CACHE:-$HOME/.cache/ddp3d}"
BUILD_DIR="${DDP3D_BUILD_DIR:-$ROOT/build}"
TORCH_VERSION="${DDP3D_TORCH_VERSION:-2.15.0}"
VENV="${DDP3D_VENV:-$DDP3D_CACHE/venv-torch-$TORCH_VERSION}"
# How ccache hashes (base dir, sloppiness) is set by CMakeLists.txt's compiler launcher.
export CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-10G}"

say() { printf '\033[1m[setup]\033[0m %s\n' "$*" >&2; }

# only_worker: the `ddp3d` target alone, without the operator and the tests; slim: LibTorch's CPU
# libraries alone (a CUDA build links the wheel's CUDA libraries, so it always has them).
only_worker=0 slim=0
case "${1:-}" in
  --demo) only_worker=1 slim=1 ;;
  --worker) only_worker=1 ;;
  "") ;;
  *) say "unknown argument $1 (usage: tools/setup.sh [--demo|--worker])"; exit 2 ;;
esac
[[ "${DDP3D_WITH_CUDA:-0}" == 1 ]] && slim=0

# 1. Debian packages. The worker's build needs the first line; the rest is for the operator,
# the tests, the test cluster and the images.
APT_PACKAGES=(build-essential cmake ninja-build ccache pkg-config python3-venv libyaml-cpp-dev
  libssl-dev prometheus-cpp-dev libpng-dev libprotobuf-dev protobuf-compiler)
((only_worker)) || APT_PACKAGES+=(libcpprest-dev libgtest-dev libgmock-dev
  prometheus iproute2 procps clang-format clang-tidy clang-14 libclang-rt-14-dev
  runc busybox-static   # tests/cluster: the container runtime's runc, the test pods' userland
  iptables conntrack    # tests/cluster: kube-proxy's rules
  buildah mmdebstrap)   # tools/build_images.sh: images without a daemon, a Debian base image
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  say "installing Debian packages: ${missing[*]}"
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# The size limit goes into the configuration file that ccache reads (ccache -p names it): the
# sanitizer and fuzz trees are built under ctest, where this export does not reach, and
# ccache's 5 GB default evicted LibTorch's objects. Without CCACHE_DIR that file is
# ~/.config/ccache/ccache.conf, not the one in the cache folder.
ccache --max-size "$CCACHE_MAXSIZE" >/dev/null

# 2. LibTorch from PyPI's torch wheel, in a venv keyed by version (shared by every clone).
# The wheel is a CUDA build; the C++ build links only its CPU libraries (cmake/Torch.cmake),
# and those load two small CUDA runtime libraries (libcudart, libcupti) and nothing else. The
# demo installs just that: torch without its dependencies plus those two wheels, at the
# versions torch pins. The full set-up (Python torch for the reference benchmarks and tests,
# the CUDA build) completes the same venv, so the build's paths never change.
if [[ ! -x "$VENV/bin/python" ]]; then
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --upgrade pip >/dev/null
fi
if ((slim)) && [[ ! -f "$VENV/.ddp3d-ready" && ! -f "$VENV/.ddp3d-cpu-libraries" ]]; then
  say "installing torch==$TORCH_VERSION's CPU libraries into $VENV (once per machine)"
  "$VENV/bin/pip" install -q --no-deps "torch==$TORCH_VERSION"
  # torch pins `cuda-toolkit[cublas,cudart,...]==V`: the same pin with only cudart and cupti.
  cuda_runtime=$("$VENV/bin/python" - <<'PY'
import importlib.metadata as md, re
for req in md.requires("torch") or []:
    m = re.match(r"cuda-toolkit\[[^]]*\]\s*(==\s*[0-9.]+)", req)
    if m:
        print("cuda-toolkit[cudart,cupti]" + m.group(1).replace(" ", ""))
PY
)
  [[ -n "$cuda_runtime" ]] || { say "torch==$TORCH_VERSION pins no cuda-toolkit[...]: cannot pick its CUDA runtime"; exit 1; }
  # --no-warn-conflicts: torch's other dependencies are left out on purpose.
  "$VENV/bin/pip" install -q --no-warn-conflicts "$cuda_runtime"
  touch "$VENV/.ddp3d-cpu-libraries"
fi
if ((!slim)) && [[ ! -f "$VENV/.ddp3d-ready" ]]; then
  say "installing torch==$TORCH_VERSION, numpy and pyyaml into $VENV (once per machine)"
  "$VENV/bin/pip" install -q "torch==$TORCH_VERSION" numpy pyyaml
  touch "$VENV/.ddp3d-ready"
fi
# TensorBoard's own reader, for the tests of the TensorBoard event files (checked on its own:
# venvs made before it was needed already carry the marker above).
if ((!slim)) && ! "$VENV/bin/python" -c 'import tensorboard' 2>/dev/null; then
  say "installing tensorboard into $VENV (once per machine)"
  "$VENV/bin/pip" install -q "tensorboard==2.21.0"
fi

# 3. Optional (DDP3D_WITH_CUDA=1): the CUDA/NCCL build, with a toolkit assembled from PyPI.
cuda_args=()
if [[ "${DDP3D_WITH_CUDA:-0}" == 1 ]]; then
  cuda_args=(-DDDP3D_WITH_CUDA=ON -DDDP3D_CUDA_ROOT="$(bash "$ROOT/tools/cuda_toolkit.sh")")
fi

# 4. Configure (once) and build. The demo's tree leaves the operator and the tests out and
# builds only `ddp3d`; a full set-up on that tree switches them on (the worker's objects stay).
parts=(-DDDP3D_BUILD_OPERATOR=ON -DDDP3D_BUILD_TESTS=ON)
((only_worker)) && parts=(-DDDP3D_BUILD_OPERATOR=OFF -DDDP3D_BUILD_TESTS=OFF)
if [[ ! -f "$BUILD_DIR/build.ninja" ]]; then
  say "configuring $BUILD_DIR"
  cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DDDP3D_PYTHON="$VENV/bin/python" "${parts[@]}" "${cuda_args[@]}" ${DDP3D_CMAKE_ARGS:-} >/dev/null
elif ((!only_worker)) && grep -Eq '^DDP3D_BUILD_(OPERATOR|TESTS):BOOL=OFF$' "$BUILD_DIR/CMakeCache.txt"; then
  say "adding the operator and the tests to $BUILD_DIR"
  cmake -S "$ROOT" -B "$BUILD_DIR" "${parts[@]}" >/dev/null
fi
say "building in $BUILD_DIR (ccache: $(ccache -k cache_dir), $(ccache -k max_size))"
targets=()
((only_worker)) && targets=(--target ddp3d)
cmake --build "$BUILD_DIR" -j "${DDP3D_JOBS:-$(nproc)}" "${targets[@]}"
