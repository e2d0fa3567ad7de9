#!/usr/bin/env bash
# Runs every ddp3d test: sets up (tools/setup.sh), then ctest over the labels unit, dist,
# integration, e2e, cluster, fuzz, sanitize and build. Extra arguments go to ctest, e.g.
# `bash tools/test.sh -L unit`.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${DDP3D_BUILD_DIR:-$ROOT/build}"
start=$(date +%s)
# Real Kubernetes parts for the integration tests (kube-apiserver and etcd from Go modules,
# built once per machine, cached), built beside the set-up at nice 19: on a new machine they
# take the cores while the set-up waits on downloads, and yield them to its C++ build.
testbin_pid=""
testbin_log="$(mktemp "${TMPDIR:-/tmp}/ddp3d-testbin.XXXXXX.log")"
if [[ -f "$ROOT/tests/testbin/build.sh" ]]; then
  # Its own process group (setsid: a background job of a script is never a group leader, so
  # setsid needs no fork and $! is the group's id): a failed set-up stops its go builds too.
  setsid nice -n 19 bash "$ROOT/tests/testbin/build.sh" >"$testbin_log" 2>&1 &
  testbin_pid=$!
fi
trap '[[ -z "$testbin_pid" ]] || kill -- "-$testbin_pid" 2>/dev/null || true; rm -f "$testbin_log"' EXIT
bash "$ROOT/tools/setup.sh"
if [[ -n "$testbin_pid" ]]; then
  testbin_rc=0
  wait "$testbin_pid" || testbin_rc=$?
  testbin_pid=""
  cat "$testbin_log" >&2
  ((testbin_rc == 0)) || { echo "[test] tests/testbin/build.sh failed (exit $testbin_rc)" >&2; exit 1; }
fi
rm -f "$testbin_log"
echo "[test] set-up took $(( $(date +%s) - start )) s" >&2
# Every test's scratch space (Python's tempfile, the C++ tests' make_temp_dir, the cluster
# scenarios' node folders) lives under one folder per run, removed when the run ends: an
# interrupted test cannot leave gigabytes behind, and a shared disk does not fill run by run
# until the test cluster's kubelets report DiskPressure. --one-file-system: never follow a
# mount a killed cluster scenario left behind.
TEST_TMP="$(mktemp -d "${TMPDIR:-/tmp}/ddp3d-test.XXXXXX")"
trap 'rm -rf --one-file-system "$TEST_TMP" 2>/dev/null || true' EXIT
export TMPDIR="$TEST_TMP"
echo "[test] scratch space: $TEST_TMP ($(df -h --output=avail "$TEST_TMP" | tail -1 | tr -d ' ') free)" >&2
cd "$BUILD_DIR"
ctest --output-on-failure --timeout 900 -j "${DDP3D_TEST_JOBS:-2}" "$@"
