#!/usr/bin/env bash
# Assembles a CUDA toolkit (nvcc + headers + link libraries + cuobjdump) from PyPI wheels,
# matching the CUDA runtime that the torch wheel in the LibTorch venv was built against, and
# prints its root (usable as CUDAToolkit_ROOT / -DDDP3D_CUDA_ROOT) on stdout.
#
#   root=$(bash tools/cuda_toolkit.sh)      # idempotent; cached under $DDP3D_CACHE
#
# Why: PyPI's torch is a CUDA build whose find_package(Torch) needs a toolkit, and neither
# this project's machines nor Debian main carry one. The compiler side (nvcc, crt, nvvm;
# cuobjdump for tests/build/cuda_architectures.sh) and cccl/cudart/curand come from NVIDIA's
# wheels pinned to the venv's versions; the large libraries torch already depends on (cuBLAS,
# cuFFT, cuSPARSE, cuSOLVER, NVRTC, NVTX, CUPTI) are linked in from the venv rather than
# downloaded twice, so the build links exactly the libraries torch loads at run time.
#
# libcuda (the driver) ships with the GPU driver, never in a wheel. The toolkit gets an empty
# lib/stubs/libcuda.so (soname libcuda.so.1, like NVIDIA's stubs) so that CMake's
# CUDA::cuda_driver target exists; it defines no symbols, so code that calls the driver API
# directly fails to link here instead of failing later. At run time the real driver is loaded.
set -euo pipefail

DDP3D_CACHE="${DDP3D_CACHE:-$HOME/.cache/ddp3d}"
TORCH_VERSION="${DDP3D_TORCH_VERSION:-2.15.0}"
VENV="${DDP3D_VENV:-$DDP3D_CACHE/venv-torch-$TORCH_VERSION}"

say() { printf '\033[1m[cuda-toolkit]\033[0m %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

[[ -x "$VENV/bin/python" ]] || die "no LibTorch venv at $VENV: run tools/setup.sh first"
site=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
venv_cuda="$site/nvidia/cu13"
[[ -d "$venv_cuda/lib" ]] || die "$venv_cuda/lib missing: the venv's torch is not a CUDA 13 build"

# Versions: the cudart the venv carries, and the curand that cuda-toolkit's metadata pins for
# that release (torch links CUDA::curand but does not depend on the wheel).
read -r cudart_version curand_spec < <("$VENV/bin/python" - <<'EOF'
import importlib.metadata as md, re
rt = md.version("nvidia-cuda-runtime")
curand = ""
for req in md.requires("cuda-toolkit") or []:
    m = re.match(r"nvidia-curand\s*==\s*([0-9.]+)", req)
    if m:
        curand = m.group(1).rstrip(".")
print(rt, curand or "10.4.*")
EOF
)
[[ -n "$cudart_version" ]] || die "cannot read nvidia-cuda-runtime's version from $VENV"

TOOLKIT="${DDP3D_CUDA_ROOT:-$DDP3D_CACHE/cuda-toolkit-$cudart_version}"
# A toolkit assembled before cuobjdump was part of it is assembled again (seconds).
ready() { [[ -f "$TOOLKIT/.ddp3d-ready" && -x "$TOOLKIT/bin/cuobjdump" ]]; }
if ready; then
  echo "$TOOLKIT"
  exit 0
fi
# One assembler at a time (setup, a test and tools/gpu_check.sh may start together).
mkdir -p "$(dirname "$TOOLKIT")"
exec 9>"$TOOLKIT.lock"
flock 9
if ready; then
  echo "$TOOLKIT"
  exit 0
fi

say "assembling CUDA $cudart_version at $TOOLKIT (once per machine)"
rm -rf "$TOOLKIT" "$TOOLKIT.wheels"
"$VENV/bin/pip" install -q --no-deps --disable-pip-version-check --target "$TOOLKIT.wheels" \
  "nvidia-cuda-nvcc==$cudart_version" "nvidia-cuda-crt==$cudart_version" \
  "nvidia-nvvm==$cudart_version" "nvidia-cuda-runtime==$cudart_version" \
  "nvidia-cuda-cccl==$cudart_version" "nvidia-cuda-cuobjdump==$cudart_version" \
  "nvidia-curand==${curand_spec}.*" >&2
wheel_cuda="$TOOLKIT.wheels/nvidia/cu13"
for tool in nvcc cuobjdump; do
  [[ -x "$wheel_cuda/bin/$tool" ]] || die "$tool missing from $wheel_cuda/bin after pip install"
done

# nvcc.profile locates everything relative to bin/.., so the root holds the wheels' tree.
mkdir -p "$TOOLKIT"
cp -a "$wheel_cuda/bin" "$wheel_cuda/nvvm" "$wheel_cuda/include" "$wheel_cuda/lib" "$TOOLKIT/"
# Headers and libraries torch's own headers and CMake targets need, from the venv; a file the
# wheels above provide wins (same release, but keep one source per file).
for kind in include lib; do
  for f in "$venv_cuda/$kind"/*; do
    name=$(basename "$f")
    [[ -e "$TOOLKIT/$kind/$name" ]] || ln -s "$f" "$TOOLKIT/$kind/$name"
  done
done
# Wheels ship only versioned sonames; the linker and FindCUDAToolkit look for libX.so.
for lib in "$TOOLKIT"/lib/lib*.so.*; do
  base="${lib%%.so.*}.so"
  [[ -e "$base" ]] || ln -s "$(basename "$lib")" "$base"
done
ln -s lib "$TOOLKIT/lib64"
mkdir -p "$TOOLKIT/lib/stubs"
printf '' | gcc -shared -x c -o "$TOOLKIT/lib/stubs/libcuda.so" -Wl,-soname,libcuda.so.1 -
# NCCL is a separate wheel tree; give it the same unversioned name for find_library.
nccl="$site/nvidia/nccl"
if [[ -f "$nccl/lib/libnccl.so.2" ]]; then
  for f in "$nccl"/include/*; do ln -s "$f" "$TOOLKIT/include/$(basename "$f")"; done
  ln -s "$nccl/lib/libnccl.so.2" "$TOOLKIT/lib/libnccl.so.2"
  ln -s libnccl.so.2 "$TOOLKIT/lib/libnccl.so"
fi
rm -rf "$TOOLKIT.wheels"

"$TOOLKIT/bin/nvcc" --version | tail -2 >&2
echo "$cudart_version" >"$TOOLKIT/.ddp3d-ready"
echo "$TOOLKIT"
