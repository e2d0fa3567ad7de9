#!/usr/bin/env bash
# Builds the libFuzzer harnesses in their own clang tree (ASan+UBSan) and runs each for a while
# over its seed corpus (tests/fuzz/corpus/<name>, copied: the source tree is never written).
#
#   tests/fuzz/run.sh [--seconds S] [--only NAME] [--jobs N] [--build-only]
#
# The build runs at nice 19 (it is not timing-sensitive, the tests beside it are) and holds
# the tree's lock, so a second run waits for it (tools/prebuild_test_parts.sh builds the tree
# ahead of the suite's fuzz.short_runs).
# A crash, sanitizer report, timeout (-timeout=10 s per input) or an input that needs more than
# 2 GiB (-rss_limit_mb) fails the run; the reproducer is kept under $DDP3D_FUZZ_OUT (default
# build-fuzz/findings). One line per fuzzer gives executions, execs/s, coverage and corpus size;
# the last line is `N passed, N failed`.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="${DDP3D_FUZZ_BUILD_DIR:-$ROOT/build-fuzz}"
OUT="${DDP3D_FUZZ_OUT:-$BUILD/findings}"
seconds=20 only="" jobs="${DDP3D_JOBS:-2}" build_only=0
while (($#)); do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --only) only="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --build-only) build_only=1; shift ;;
    *) echo "usage: $0 [--seconds S] [--only NAME] [--jobs N] [--build-only]" >&2; exit 2 ;;
  esac
done
[[ "$seconds" =~ ^[1-9][0-9]*$ ]] || { echo "--seconds: a positive integer, not '$seconds'" >&2; exit 2; }
command -v clang++-14 >/dev/null || { echo "fuzz: clang++-14 missing (Debian clang-14, libclang-rt-14-dev; tools/setup.sh installs them)" >&2; exit 1; }
mkdir -p "$BUILD"
exec 8>"$BUILD/.ddp3d-test.lock"
flock 8
if [[ ! -f "$BUILD/build.ninja" ]]; then
  # -g1 (clang: line tables only): what a finding's stack trace needs.
  CC=clang-14 CXX=clang++-14 cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
    -DDDP3D_FUZZ=ON >&2
fi
nice -n 19 cmake --build "$BUILD" -j "$jobs" >&2
((build_only == 0)) || exit 0
mkdir -p "$OUT"
passed=0 failed=0
for corpus in "$ROOT"/tests/fuzz/corpus/*/; do
  name="$(basename "$corpus")"
  [[ -z "$only" || "$only" == "$name" ]] || continue
  work="$(mktemp -d)"
  log="$OUT/$name.log"
  rc=0
  # Every input is also a seed for the next run's corpus (work), the seeds stay read-only.
  "$BUILD/tests/fuzz/fuzz_$name" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -max_len=65536 -print_final_stats=1 -artifact_prefix="$OUT/$name-" "$work" "$corpus" \
    >"$log" 2>&1 || rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+' "$log" | tail -1)
  if ((rc == 0)); then
    passed=$((passed + 1))
    echo "fuzz $name: ok, ${execs:-?} execs in ${seconds} s (${rate:-?}/s), ${cov:-no coverage line}"
  else
    failed=$((failed + 1))
    echo "fuzz $name: FAILED (exit $rc) after ${execs:-?} execs; log $log, reproducer $OUT/$name-*"
    grep -E "ERROR|SUMMARY|runtime error|==[0-9]+==" "$log" | head -20
  fi
  rm -rf "$work"
done
echo "$passed passed, $failed failed"
((failed == 0 && passed > 0))
