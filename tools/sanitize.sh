#!/usr/bin/env bash
# Builds the concurrent parts in a sanitizer tree and runs their tests there:
#
#   tools/sanitize.sh asan    # AddressSanitizer + UndefinedBehaviorSanitizer (build-asan)
#   tools/sanitize.sh tsan    # ThreadSanitizer, torch-free tree (build-tsan)
#   tools/sanitize.sh KIND --build-only   # the tree only (tools/prebuild_test_parts.sh)
#
# asan: the shared-memory all-reduce and heartbeats (dist_unit_tests), DDP across real rank
#   processes (ddp_dist_tests), the HTTP server, the kube client pieces and the operator's
#   Manager. LibTorch itself is not instrumented; our code around it is.
# tsan: the same torch-free suites plus the kube client, watch and leader election against the
#   real kube-apiserver (kube.integration) and the job controller inside the real operator
#   binary (integration.operator.ReconcileTest). LibTorch is left out: its uninstrumented
#   thread pools would only produce false reports.
# The build holds the tree's lock (a second run waits for it) and runs at nice 19.
# Any sanitizer report fails the test that produced it (halt_on_error / no recovery). The last
# line is `N passed, N failed` (test programs).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
kind="${1:-}"
build_only=0
case "${2:-}" in
  "") ;;
  --build-only) build_only=1 ;;
  *) echo "usage: $0 asan|tsan [--build-only]" >&2; exit 2 ;;
esac
case "$kind" in
  asan)
    flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
    args=()
    targets=(dist_unit_tests ddp_dist_tests ddp_probe common_http_test kube_unit_tests
      operator_manager_tests)
    programs=(tests/unit/dist/dist_unit_tests tests/dist/ddp/ddp_dist_tests
      tests/unit/common/common_http_test tests/unit/kube/kube_unit_tests
      tests/unit/operator/operator_manager_tests)
    ctest_regex=""
    ;;
  tsan)
    # -Wno-tsan: boost.asio (under cpprest) uses atomic_thread_fence, which GCC warns TSan
    # cannot model; the fences are in header code we do not own.
    flags="-fsanitize=thread -fno-omit-frame-pointer -Wno-tsan"
    args=(-DDDP3D_BUILD_WORKER=OFF)
    targets=(common_http_test kube_unit_tests operator_manager_tests kube_integration_tests
      ddp3d-operator)
    programs=(tests/unit/common/common_http_test tests/unit/kube/kube_unit_tests
      tests/unit/operator/operator_manager_tests)
    ctest_regex="^(kube\.integration|integration\.operator\.ReconcileTest)$"
    ;;
  *) echo "usage: $0 asan|tsan [--build-only]" >&2; exit 2 ;;
esac
BUILD="${DDP3D_SANITIZE_BUILD_DIR:-$ROOT/build-$kind}"
VENV="${DDP3D_VENV:-${DDP3D_CACHE:-$HOME/.cache/ddp3d}/venv-torch-${DDP3D_TORCH_VERSION:-2.15.0}}"
mkdir -p "$BUILD"
exec 8>"$BUILD/.ddp3d-test.lock"
flock 8
if [[ ! -f "$BUILD/build.ninja" ]]; then
  # -g1: line tables are what the reports' stack traces need, at half the objects' size and
  # less compile time than -g.
  cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
    -DDDP3D_PYTHON="$VENV/bin/python" -DCMAKE_CXX_FLAGS="$flags" \
    -DCMAKE_EXE_LINKER_FLAGS="$flags" -DCMAKE_SHARED_LINKER_FLAGS="$flags" "${args[@]}" >&2
fi
nice -n 19 cmake --build "$BUILD" -j "${DDP3D_JOBS:-2}" --target "${targets[@]}" >&2
((build_only == 0)) || exit 0

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:halt_on_error=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:${TSAN_OPTIONS:-}"
# LibTorch's and cpprest's own allocations that live until exit are not ours to fix.
export LSAN_OPTIONS="suppressions=$ROOT/tools/sanitizers/lsan.supp:${LSAN_OPTIONS:-}"
[[ "$kind" == tsan ]] && export TSAN_OPTIONS="suppressions=$ROOT/tools/sanitizers/tsan.supp:$TSAN_OPTIONS"
passed=0 failed=0
for p in "${programs[@]}"; do
  start=$SECONDS
  if (cd "$BUILD" && DDP3D_BINARY_DIR="$BUILD" "$BUILD/$p" --gtest_brief=1 >"$BUILD/$(basename "$p").log" 2>&1); then
    passed=$((passed + 1)); echo "$kind $(basename "$p"): ok ($((SECONDS - start)) s)"
  else
    failed=$((failed + 1)); echo "$kind $(basename "$p"): FAILED ($((SECONDS - start)) s), log $BUILD/$(basename "$p").log"
    grep -E "ERROR: |WARNING: ThreadSanitizer|runtime error|SUMMARY|FAILED" "$BUILD/$(basename "$p").log" | head -20
  fi
done
if [[ -n "$ctest_regex" ]]; then
  start=$SECONDS
  if (cd "$BUILD" && ctest -R "$ctest_regex" --output-on-failure --timeout 900 >"$BUILD/ctest.log" 2>&1); then
    passed=$((passed + 1)); echo "$kind ctest -R '$ctest_regex': ok ($((SECONDS - start)) s)"
  else
    failed=$((failed + 1)); echo "$kind ctest -R '$ctest_regex': FAILED, log $BUILD/ctest.log"
    grep -E "WARNING: ThreadSanitizer|ERROR: |SUMMARY|Failed|FAIL" "$BUILD/ctest.log" | head -20
  fi
fi
echo "$passed passed, $failed failed"
((failed == 0))
