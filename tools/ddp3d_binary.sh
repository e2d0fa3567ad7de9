# Sourced by the tools/*.sh scripts: sets DDP3D_BIN to the ddp3d worker binary.
# Order: $DDP3D_BIN, this checkout's build (DDP3D_BUILD_DIR or build/), then PATH (images).
if [[ -z "${DDP3D_BIN:-}" ]]; then
  _root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  _build="${DDP3D_BUILD_DIR:-$_root/build}"
  if [[ -x "$_build/worker/ddp3d" ]]; then
    DDP3D_BIN="$_build/worker/ddp3d"
  elif command -v ddp3d >/dev/null 2>&1; then
    DDP3D_BIN="$(command -v ddp3d)"
  else
    echo "ddp3d binary not found: run 'bash tools/setup.sh' or set DDP3D_BIN" >&2
    exit 1
  fi
fi
