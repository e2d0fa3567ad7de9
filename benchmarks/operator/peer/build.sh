#!/usr/bin/env bash
# Builds the benchmark's Go peer operator (Kubeflow training-operator, the version go.mod
# pins) into ${DDP3D_CACHE:-~/.cache/ddp3d}/bench/ and prints the binary's path. Cached by a
# stamp of go.mod, go.sum and the Go version; concurrent callers queue on a lock. A cold
# build takes a few minutes on 2 cores (controller-runtime, client-go).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
pkg=github.com/kubeflow/training-operator/cmd/training-operator.v1
version="$(awk '$1 == "github.com/kubeflow/training-operator" { print $2 }' "$here/go.mod")"
[[ -n "$version" ]] || { echo "peer/build.sh: go.mod does not require the training-operator" >&2; exit 1; }
cache="${DDP3D_CACHE:-$HOME/.cache/ddp3d}/bench"
out="$cache/training-operator-$version"
mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9
stamp="$(cat "$here/go.mod" "$here/go.sum" <(go env GOVERSION) | sha256sum | cut -d' ' -f1)"
if [[ ! -x "$out" || "$(cat "$out.stamp" 2>/dev/null)" != "$stamp" ]]; then
  echo "peer/build.sh: building training-operator $version (minutes, once)" >&2
  start=$SECONDS
  (cd "$here" && CGO_ENABLED=0 go build -trimpath -p "${DDP3D_GO_JOBS:-2}" -o "$out.tmp.$$" "$pkg")
  mv -f "$out.tmp.$$" "$out"
  echo "$stamp" >"$out.stamp"
  echo "peer/build.sh: built in $((SECONDS - start))s" >&2
fi
echo "$out"
