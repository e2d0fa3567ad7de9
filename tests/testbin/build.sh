#!/usr/bin/env bash
# Builds kube-apiserver and etcd from Go modules into a per-version cache outside
# the source tree and prints the directory holding them:
#   ${DDP3D_CACHE:-$HOME/.cache/ddp3d}/testbin/<K8S_VERSION>/{kube-apiserver,etcd}
# Idempotent: a binary is rebuilt only when its go.mod/go.sum changed. Safe to call
# from concurrent tests (one flock per cache dir). Progress goes to stderr.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=versions.sh
source "$here/versions.sh"
cache="${DDP3D_CACHE:-$HOME/.cache/ddp3d}/testbin/$K8S_VERSION"
mkdir -p "$cache"

log() { echo "testbin: $*" >&2; }

# The stamp ties a cached binary to the exact module graph it was built from.
stamp_of() { cat "$here/$1/go.mod" "$here/$1/go.sum" | sha256sum | cut -d' ' -f1; }

build_one() { # name package ldflags-extra
  local name="$1" pkg="$2" extra="$3"
  local out="$cache/$name" stamp
  stamp="$(stamp_of "$name")"
  if [[ -x "$out" && "$(cat "$out.stamp" 2>/dev/null)" == "$stamp" ]]; then
    log "$name up to date ($out)"
    return
  fi
  log "building $name ($pkg) into $cache — cold builds take many minutes on 2 cores"
  local start=$SECONDS
  (cd "$here/$name" &&
    CGO_ENABLED=0 go build -p 2 -trimpath -ldflags="-s -w $extra" -o "$out.tmp.$$" "$pkg")
  mv -f "$out.tmp.$$" "$out"
  echo "$stamp" >"$out.stamp"
  log "built $name in $((SECONDS - start))s"
}

# versions.sh names the cache directory; the go.mod files decide what is built.
require_pin() { # module-dir module version
  grep -qE "^(require )?[[:space:]]*$2 $3( |\$)" "$here/$1/go.mod" ||
    { echo "testbin: $1/go.mod does not require $2 $3 (versions.sh); update both together" >&2; exit 1; }
}
require_pin kube-apiserver k8s.io/kubernetes "$K8S_VERSION"
require_pin etcd go.etcd.io/etcd/server/v3 "$ETCD_VERSION"

exec 9>"$cache/.lock"
flock 9
major="${K8S_VERSION#v}"; major="${major%%.*}"
minor="${K8S_VERSION#v*.}"; minor="${minor%%.*}"
vpkg=k8s.io/component-base/version
build_one kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver \
  "-X $vpkg.gitVersion=$K8S_VERSION -X $vpkg.gitMajor=$major -X $vpkg.gitMinor=$minor -X $vpkg.gitTreeState=clean"
build_one etcd ddp3d.io/testbin/etcd \
  "-X go.etcd.io/etcd/api/v3/version.GitSHA=$ETCD_VERSION"
echo "$cache"
