#!/usr/bin/env bash
# Collects what a runtime image needs besides its Debian packages, for the Dockerfiles'
# from-source build stages and tools/build_images.sh's prebuilt binaries alike:
#   bash docker/runtime_payload.sh BINARY DEST [--link]
#     DEST/usr/local/bin/NAME  the binary, debug info stripped (symbols kept for backtraces)
#     DEST/opt/ddp3d/lib/      every shared library ldd resolves that no Debian package
#                              owns (LibTorch's, from the torch wheel), in one folder
# The images set LD_LIBRARY_PATH=/opt/ddp3d/lib: the binary's RUNPATH names the builder's
# venv (under /root/.cache for a root build, which the image's non-root user cannot
# traverse), and the wheel's libraries find each other through their $ORIGIN RUNPATH.
# Libraries from Debian packages are left to the Dockerfile's apt-get install
# (tests/e2e/docker/dockerfiles_test.py checks its package names); one ldd cannot find is an
# error. --link hard-links the libraries instead of copying them (same filesystem only).
set -euo pipefail

die() { echo "runtime_payload: $*" >&2; exit 1; }
[[ $# -ge 2 && $# -le 3 ]] || die "usage: $0 BINARY DEST [--link]"
bin="$1" dest="$2" link="${3:-}"
[[ -z "$link" || "$link" == --link ]] || die "unknown option $link"
[[ -f "$bin" && -x "$bin" ]] || die "$bin: no such executable"
libdir="$dest/opt/ddp3d/lib"
mkdir -p "$dest/usr/local/bin" "$libdir"

ldd_out="$(ldd "$bin")" || die "ldd $bin failed: $ldd_out"
if grep -q "not found" <<<"$ldd_out"; then
  die "$bin: libraries not found: $(grep "not found" <<<"$ldd_out" | awk '{print $1}' | xargs)"
fi

# "soname => /path (0x...)" lines: the vDSO and the dynamic loader have no "=>".
while read -r soname path; do
  if dpkg -S "$path" >/dev/null 2>&1 || dpkg -S "$(realpath "$path")" >/dev/null 2>&1; then
    continue
  fi
  # Under its soname (what DT_NEEDED asks for), with the content of the file it resolves to.
  if [[ "$link" == --link ]] && ln -f "$(realpath "$path")" "$libdir/$soname" 2>/dev/null; then
    continue
  fi
  cp -fL "$path" "$libdir/$soname"
done < <(sed -nE 's/^\s*(\S+) => (\/\S+) \(0x[0-9a-f]+\)$/\1 \2/p' <<<"$ldd_out")

strip --strip-debug -o "$dest/usr/local/bin/$(basename "$bin")" "$bin"
