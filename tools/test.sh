#!/usr/bin/env bash
# Runs every ddp3d test: sets up (tools/setup.sh), then ctest over the labels unit, dist,
# integration, e2e, cluster, fuzz, sanitize and build. Extra arguments go to ctest, e.g.
# `bash tools/test.sh -L unit`.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${DDP3D_BUILD_DIR:-$ROOT/build}"
start=$(date +%s)
bash "$ROOT/tools/setup.sh"
# Real Kubernetes parts for the integration tests (built once per machine, cached).
if [[ -f "$ROOT/tests/testbin/build.sh" ]]; then bash "$ROOT/tests/testbin/build.sh"; fi
echo "[test] set-up took $(( $(date +%s) - start )) s" >&2
cd "$BUILD_DIR"
ctest --output-on-failure --timeout 900 -j "${DDP3D_TEST_JOBS:-2}" "$@"
