#!/usr/bin/env bash
# Builds, ahead of the tests that need them, the parts of the whole suite that a cold machine
# has to compile inside a test: tools/test.sh starts it in the background at nice 19 so that
# it takes only the cores the set-up and the tests leave idle (downloads, pods starting on the
# test cluster, processes waiting on each other), instead of a test holding a ctest slot, or
# the whole machine, while it compiles.
#
#   tools/prebuild_test_parts.sh go      # kube-apiserver and etcd, then the test cluster's
#                                        # binaries and images (tests/testbin, tests/cluster)
#   tools/prebuild_test_parts.sh trees   # after tools/setup.sh: the fuzz, CUDA-architecture,
#                                        # tsan and asan trees
#   tools/prebuild_test_parts.sh all --trees-after FILE   # go, then trees once FILE exists
#
# tools/test.sh runs `all`: the Go parts first, at once, because the cluster suites wait for
# them and are the longest tests; the trees after them, so that they fill the cores the
# cluster suites leave idle while pods start instead of slowing the Go builds down.
# Each part takes the same lock as the test that uses it, so that test waits for the build
# here and then finds it up to date; a failed build here is only logged: the test builds again
# and fails with the compiler's message. Output is one line per part and the builds' logs.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

part() { # name command...
  local name="$1" start=$SECONDS rc=0
  shift
  "$@" >&2 || rc=$?
  echo "[prebuild] $name: $( ((rc == 0)) && echo built || echo "failed (exit $rc)") in $((SECONDS - start)) s" >&2
}

go_parts() {
  # In this order: the cluster's Kubernetes binaries reuse the packages kube-apiserver
  # compiled (go build cache).
  part kube-apiserver+etcd bash "$ROOT/tests/testbin/build.sh"
  part cluster bash "$ROOT/tests/cluster/build.sh" all
}
tree_parts() {
  # Smallest first: the fuzz tree and the CUDA kernels are done before the tests that use
  # them are reached; the sanitizer trees serve the last tests of the suite.
  part fuzz-tree bash "$ROOT/tests/fuzz/run.sh" --build-only
  part cuda-architectures-tree bash "$ROOT/tests/build/cuda_architectures.sh" --build-only
  part tsan-tree bash "$ROOT/tools/sanitize.sh" tsan --build-only
  part asan-tree bash "$ROOT/tools/sanitize.sh" asan --build-only
}
case "${1:-}" in
  go) go_parts ;;
  trees) tree_parts ;;
  all)
    [[ "${2:-}" == --trees-after && -n "${3:-}" ]] || { echo "usage: $0 all --trees-after FILE" >&2; exit 2; }
    go_parts
    while [[ ! -e "$3" ]]; do sleep 5; done
    tree_parts
    ;;
  *) echo "usage: $0 go|trees|all --trees-after FILE" >&2; exit 2 ;;
esac
