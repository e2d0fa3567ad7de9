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
# LibTorch sources are compiled with GCC's precompiled header (-include cmake_pch.hxx), which
# clang cannot read; clang-tidy gets their commands without it and parses what each file
# includes itself (so a file that leans on the PCH for a header fails here).
db="$build/clang-tidy-db"
mkdir -p "$db"
tmp="$(mktemp "$db/compile_commands.XXXXXX")"  # two lint tests may run at once
sed -E 's# -include [^ ]*cmake_pch\.hxx##g; s# -Winvalid-pch##g' "$build/compile_commands.json" >"$tmp"
mv "$tmp" "$db/compile_commands.json"
start=$SECONDS
# xargs exits non-zero when any clang-tidy does; each prints its own findings.
printf '%s\n' "$@" | xargs -P2 -n1 "$tidy" -p "$db" --quiet
echo "clang-tidy: $# files clean in $((SECONDS - start)) s"
