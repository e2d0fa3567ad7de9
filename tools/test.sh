#!/usr/bin/env bash
# Runs every ddp3d test: sets up (tools/setup.sh), then ctest over the labels unit, dist,
# integration, e2e, cluster, fuzz, sanitize and build. Extra arguments go to ctest, e.g.
# `bash tools/test.sh -L unit`.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${DDP3D_BUILD_DIR:-$ROOT/build}"
start=$(date +%s)
# Every test's scratch space (Python's tempfile, the C++ tests' make_temp_dir, the cluster
# scenarios' node folders) lives under one folder per run, removed when the run ends: an
# interrupted test cannot leave gigabytes behind, and a shared disk does not fill run by run
# until the test cluster's kubelets report DiskPressure. --one-file-system: never follow a
# mount a killed cluster scenario left behind.
TEST_TMP="$(mktemp -d "${TMPDIR:-/tmp}/ddp3d-test.XXXXXX")"
# The whole suite (no ctest arguments) first starts what its tests would otherwise compile
# inside their slots (tools/prebuild_test_parts.sh), in the background at nice 19: the Go-built
# Kubernetes parts at once, then the sanitizer, fuzz and CUDA trees once the set-up has made
# the venv they configure against. Its own session and process group (setsid), whose id it
# writes down, stopped when this script exits. Where the kernel schedules each session as a
# group (autogroup), nice only ranks processes within a session: the session's own nice is set
# to 19 too, or the builds would take half the cores whatever the tests need. Its log stays in
# the build tree.
prebuild=0
prebuild_log="$BUILD_DIR/prebuild.log"
prebuild_group="$TEST_TMP/prebuild.pgid"
setup_done="$TEST_TMP/setup-done"
finish() {
  [[ ! -s "$prebuild_group" ]] || kill -- "-$(cat "$prebuild_group")" 2>/dev/null || true
  rm -rf --one-file-system "$TEST_TMP" 2>/dev/null || true
}
trap finish EXIT
if (($# == 0)); then
  mkdir -p "$BUILD_DIR"
  # shellcheck disable=SC2016 # $0, $1 and $@ belong to the inner shell
  setsid bash -c 'echo $$ >"$1"; shift; [[ ! -w /proc/self/autogroup ]] || echo 19 >/proc/self/autogroup
    exec nice -n 19 bash "$0" "$@"' "$ROOT/tools/prebuild_test_parts.sh" "$prebuild_group" \
    all --trees-after "$setup_done" >"$prebuild_log" 2>&1 &
  prebuild=1
  echo "[test] building the test cluster's Go parts, then the fuzz, CUDA and sanitizer trees, in the background at nice 19 (log: $prebuild_log)" >&2
fi
bash "$ROOT/tools/setup.sh"
touch "$setup_done"
echo "[test] set-up took $(( $(date +%s) - start )) s" >&2
export TMPDIR="$TEST_TMP"
echo "[test] scratch space: $TEST_TMP ($(df -h --output=avail "$TEST_TMP" | tail -1 | tr -d ' ') free)" >&2
cd "$BUILD_DIR"
rc=0
ctest --output-on-failure --timeout 900 -j "${DDP3D_TEST_JOBS:-2}" "$@" 2>&1 | tee "$TEST_TMP/ctest.log" || rc=$?
if ((prebuild)); then
  echo "[test] built in the background:" >&2
  grep -h '^\[prebuild\]' "$prebuild_log" >&2 || true
fi
# The closing line: ctest's count, and the whole run's time.
summary="$(grep -E '^[0-9]+% tests passed' "$TEST_TMP/ctest.log" | tail -1 || true)"
echo "[test] ${summary:-ctest printed no result (exit $rc)}; $(( $(date +%s) - start )) s in all"
exit "$rc"
