#!/usr/bin/env bash
# Collects what a runtime image needs besides its Debian packages, for the Dockerfiles'
# from-source build stages and tools/build_images.sh's prebuilt binaries alike:
#   bash docker/runtime_payload.sh BINARY DEST [--link] [--whole-wheel]
#     DEST/usr/local/bin/NAME  the binary, debug info stripped (symbols kept for backtraces)
#     DEST/opt/ddp3d/lib/      every shared library ldd resolves that no Debian package
#                              owns (LibTorch's, from the torch wheel), in one folder
#     --whole-wheel            also every shared library of the torch wheel and of the
#                              nvidia-* wheels beside it: a CUDA build's libtorch_cuda
#                              dlopen()s cuDNN's engines, NVRTC's builtins, cuSOLVER and
#                              more, which ldd cannot see (the CUDA worker image)
# The images set LD_LIBRARY_PATH=/opt/ddp3d/lib: the binary's RUNPATH names the builder's
# venv (under /root/.cache for a root build, which the image's non-root user cannot
# traverse), and the wheel's libraries find each other through their $ORIGIN RUNPATH, or in
# that one folder (dlopen() searches LD_LIBRARY_PATH too).
# Libraries from Debian packages are left to the Dockerfile's apt-get install
# (tests/e2e/docker/dockerfiles_test.py checks its package names); one ldd cannot find is an
# error. --link hard-links the libraries instead of copying them (same filesystem only).
set -euo pipefail

die() { echo "runtime_payload: $*" >&2; exit 1; }
[[ $# -ge 2 ]] || die "usage: $0 BINARY DEST [--link] [--whole-wheel]"
bin="$1" dest="$2" link="" whole_wheel=0
shift 2
for opt in "$@"; do
  case "$opt" in
  --link) link=--link ;;
  --whole-wheel) whole_wheel=1 ;;
  *) die "unknown option $opt" ;;
  esac
done
[[ -f "$bin" && -x "$bin" ]] || die "$bin: no such executable"
libdir="$dest/opt/ddp3d/lib"
mkdir -p "$dest/usr/local/bin" "$libdir"

ldd_out="$(ldd "$bin")" || die "ldd $bin failed: $ldd_out"
if grep -q "not found" <<<"$ldd_out"; then
  die "$bin: libraries not found: $(grep "not found" <<<"$ldd_out" | awk '{print $1}' | xargs)"
fi

put() { # file soname
  if [[ "$link" == --link ]] && ln -f "$(realpath "$1")" "$libdir/$2" 2>/dev/null; then
    return
  fi
  cp -fL "$1" "$libdir/$2"
}

if ((whole_wheel)); then
  torch_lib="$(sed -nE 's/^\s*libtorch_cpu\.so => (\/\S+) \(0x[0-9a-f]+\)$/\1/p' <<<"$ldd_out")"
  [[ -n "$torch_lib" ]] || die "--whole-wheel: $bin does not load libtorch_cpu.so"
  torch_lib="$(dirname "$(realpath "$torch_lib")")"
  site="$(dirname "$(dirname "$torch_lib")")"
  # The wheels' files are named by their sonames; two of one name would shadow each other.
  while IFS= read -r f; do
    [[ ! -e "$libdir/$(basename "$f")" ]] || die "--whole-wheel: two libraries named $(basename "$f") (one is $f)"
    put "$f" "$(basename "$f")"
  # (not libtorch_python: the Python bindings, which need a libpython the image lacks)
  done < <(find "$torch_lib" "$site"/nvidia/*/lib -maxdepth 1 -type f -name '*.so*' \
    ! -name 'libtorch_python*' 2>/dev/null | sort)
fi

# "soname => /path (0x...)" lines: the vDSO and the dynamic loader have no "=>".
while read -r soname path; do
  if dpkg -S "$path" >/dev/null 2>&1 || dpkg -S "$(realpath "$path")" >/dev/null 2>&1; then
    continue
  fi
  # With the whole wheel, its copy wins (a build may resolve libcudart in a toolkit).
  ((whole_wheel)) && [[ -e "$libdir/$soname" ]] && continue
  # Under its soname (what DT_NEEDED asks for), with the content of the file it resolves to.
  put "$path" "$soname"
done < <(sed -nE 's/^\s*(\S+) => (\/\S+) \(0x[0-9a-f]+\)$/\1 \2/p' <<<"$ldd_out")

strip --strip-debug -o "$dest/usr/local/bin/$(basename "$bin")" "$bin"
