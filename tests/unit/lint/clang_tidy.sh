#!/usr/bin/env bash
# clang-tidy with the root .clang-tidy (warnings are errors) over the given sources, two at a
# time, using the build's compile_commands.json.
#   clang_tidy.sh CLANG_TIDY BUILD_DIR FILE...   (FILE relative to the source root)
set -euo pipefail
tidy="$1" build="$2"
shift 2
cd "$(dirname "${BASH_SOURCE[0]}")/../../.."
[[ -f "$build/compile_commands.json" ]] || { echo "no $build/compile_commands.json" >&2; exit 1; }
(($# > 0)) || { echo "no files given" >&2; exit 1; }
for f in "$@"; do [[ -f "$f" ]] || { echo "$f: no such file (update the list)" >&2; exit 1; }; done
start=$SECONDS
# xargs exits non-zero when any clang-tidy does; each prints its own findings.
printf '%s\n' "$@" | xargs -P2 -n1 "$tidy" -p "$build" --quiet
echo "clang-tidy: $# files clean in $((SECONDS - start)) s"
