#!/usr/bin/env bash
# Builds what the one-machine test cluster runs, besides testbin's kube-apiserver and
# etcd, into a per-version cache outside the source tree and prints its directory:
#   ${DDP3D_CACHE:-$HOME/.cache/ddp3d}/cluster/<K8S_VERSION>/
#     bin/   kubelet kube-controller-manager kube-scheduler kube-proxy containerd
#            containerd-shim-runc-v2 coredns prometheus
#     kueue/ kueue-<KUEUE_VERSION> (controller manager) and manifests-<KUEUE_VERSION>/ (its CRDs,
#            RBAC roles, webhook configurations, copied from the module source)
#     prometheus-operator/ operator-<V> and prometheus-config-reloader-<V> (V =
#            PROMETHEUS_OPERATOR_VERSION) and manifests-<V>/ (CRDs, the operator's and
#            Prometheus's ClusterRoles, copied from the module source)
#     cni/   bridge host-local loopback
#     images/pause.tar busybox.tar prometheus.tar prometheus-config-reloader.tar
#            (OCI archives for `ctr images import`)
# Idempotent: a binary is rebuilt only when the inputs in its stamp changed. Safe to call
# from concurrent tests (one flock per cache dir). Progress goes to stderr.
# DDP3D_GO_JOBS (default: the core count) is `go build -p`. The builds run at nice 19, so the
# tests sharing the machine keep their cores and the builds take what is idle (a cold
# kube-scheduler on 2 idle cores: 236 s at -p 1, 193 s at -p 2).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=versions.sh
source "$here/versions.sh"
cache="${DDP3D_CACHE:-$HOME/.cache/ddp3d}/cluster/$K8S_VERSION"
jobs="${DDP3D_GO_JOBS:-$(nproc)}"
mkdir -p "$cache/bin" "$cache/cni" "$cache/images"

log() { echo "cluster-build: $*" >&2; }
die() { echo "cluster-build: $*" >&2; exit 1; }

# A stamp ties a cached artefact to the exact inputs it was built from.
stamp_of() { # files-and-strings...
  local a
  for a in "$@"; do if [[ -f "$a" ]]; then cat "$a"; else echo "$a"; fi; done | sha256sum | cut -d' ' -f1
}
fresh() { [[ -e "$1" && "$(cat "$1.stamp" 2>/dev/null)" == "$2" ]]; }

build_go() { # out module-dir package ldflags [tags]
  local out="$1" mod="$here/$2" pkg="$3" ldflags="$4" tags="${5:-}" stamp
  stamp="$(stamp_of "$mod/go.mod" "$mod/go.sum" "$mod"/*.go "$pkg" "$ldflags" "$tags" "$(go env GOVERSION)")"
  if fresh "$out" "$stamp"; then
    log "$(basename "$out") up to date"
    return
  fi
  log "building $(basename "$out") ($pkg) — a cold build takes minutes on 2 cores"
  local start=$SECONDS
  # -trimpath and CGO_ENABLED=0 as in ../testbin/build.sh, so the Kubernetes packages
  # kube-apiserver already compiled are go build cache hits.
  (cd "$mod" && CGO_ENABLED=0 nice -n 19 go build -p "$jobs" -trimpath -tags "$tags" \
    -ldflags="-s -w $ldflags" -o "$out.tmp.$$" "$pkg")
  mv -f "$out.tmp.$$" "$out"
  echo "$stamp" >"$out.stamp"
  log "built $(basename "$out") in $((SECONDS - start))s"
}

# versions.sh names the pins; each go.mod decides what is built.
require_pin() { # module-dir module version
  grep -qE "^(require )?[[:space:]]*$2 $3( |\$)" "$here/$1/go.mod" ||
    die "$1/go.mod does not require $2 $3 (versions.sh); update both together"
}

exec 9>"$cache/.lock"
flock 9

build_kube() {
  require_pin kube k8s.io/kubernetes "$K8S_VERSION"
  local major minor vpkg=k8s.io/component-base/version
  major="${K8S_VERSION#v}"; major="${major%%.*}"
  minor="${K8S_VERSION#v*.}"; minor="${minor%%.*}"
  local v="-X $vpkg.gitVersion=$K8S_VERSION -X $vpkg.gitMajor=$major -X $vpkg.gitMinor=$minor -X $vpkg.gitTreeState=clean"
  local c
  for c in kube-scheduler kube-controller-manager kubelet kube-proxy kubectl; do
    build_go "$cache/bin/$c" kube "k8s.io/kubernetes/cmd/$c" "$v"
  done
}

build_runtime() {
  require_pin containerd github.com/containerd/containerd/v2 "$CONTAINERD_VERSION"
  require_pin cni github.com/containernetworking/plugins "$CNI_PLUGINS_VERSION"
  # btrfs/devmapper/zfs snapshotters need cgo or are unused here: overlayfs is.
  local tags="no_btrfs no_devmapper no_zfs" v="-X github.com/containerd/containerd/v2/version.Version=$CONTAINERD_VERSION"
  local c
  for c in containerd containerd-shim-runc-v2 ctr; do
    build_go "$cache/bin/$c" containerd "github.com/containerd/containerd/v2/cmd/$c" "$v" "$tags"
  done
  for c in main/bridge main/loopback ipam/host-local; do
    build_go "$cache/cni/${c#*/}" cni "github.com/containernetworking/plugins/plugins/$c" ""
  done
}

build_coredns() {
  require_pin coredns github.com/coredns/coredns "$COREDNS_VERSION"
  build_go "$cache/bin/coredns" coredns . ""
}

# Upstream Prometheus with only Kubernetes service discovery (Debian's package has none):
# the cluster scenarios' scraper, run on the node like CoreDNS.
build_prometheus() {
  require_pin prometheus github.com/prometheus/prometheus "$PROMETHEUS_MODULE_VERSION"
  local v="-X github.com/prometheus/common/version.Version=$PROMETHEUS_VERSION"
  build_go "$cache/bin/prometheus" prometheus github.com/prometheus/prometheus/cmd/prometheus \
    "$v" "remove_all_sd enable_kubernetes_sd"
}

# Kueue's controller manager, and the manifests of the same module version that kueue.sh
# installs: CRDs (and the crd kustomization naming those with conversion webhooks), the
# manager's roles (role.yaml; manager_secrets_role.yaml for Secrets in its namespace;
# metrics_auth_role.yaml for its metrics endpoint's authn/authz) and the webhook
# configurations.
# They come from the module's source in the Go module cache (`go mod download` fills it
# from the proxy), so binary and manifests never disagree.
build_kueue() {
  require_pin kueue sigs.k8s.io/kueue "$KUEUE_VERSION"
  mkdir -p "$cache/kueue"
  local v="-X sigs.k8s.io/kueue/pkg/version.GitVersion=$KUEUE_VERSION"
  build_go "$cache/kueue/kueue-$KUEUE_VERSION" kueue sigs.k8s.io/kueue/cmd/kueue "$v"
  local src out="$cache/kueue/manifests-$KUEUE_VERSION" stamp
  src="$(cd "$here/kueue" && go mod download sigs.k8s.io/kueue && go list -m -f '{{.Dir}}' sigs.k8s.io/kueue)"
  [[ -d "$src/config/components" ]] || die "no config/components in $src"
  stamp="$(stamp_of "$src/config/components/crd/bases"/*.yaml "$src/config/components/crd/kustomization.yaml" \
    "$src/config/components/rbac/"{role,manager_secrets_role,metrics_auth_role}.yaml \
    "$src/config/components/webhook/manifests.yaml")"
  if fresh "$out" "$stamp"; then
    log "kueue manifests up to date"
    return
  fi
  rm -rf "$out.tmp.$$"
  mkdir -p "$out.tmp.$$/crd"
  cp "$src/config/components/crd/bases"/*.yaml "$out.tmp.$$/crd/"
  cp "$src/config/components/crd/kustomization.yaml" "$out.tmp.$$/crd-kustomization.yaml"
  cp "$src/config/components/rbac/"{role,manager_secrets_role,metrics_auth_role}.yaml "$out.tmp.$$/"
  cp "$src/config/components/webhook/manifests.yaml" "$out.tmp.$$/webhooks.yaml"
  chmod -R u+w "$out.tmp.$$"
  rm -rf "$out" "$out.stamp"
  mv "$out.tmp.$$" "$out"
  echo "$stamp" >"$out.stamp"
  log "copied kueue manifests from $src"
}

# The Prometheus Operator and its config reloader, and the manifests of the same module
# version that prometheus_operator.sh installs: the CRDs (example/prometheus-operator-crd),
# the operator's ClusterRole (example/rbac/prometheus-operator) and the one upstream gives a
# Prometheus server's ServiceAccount (example/rbac/prometheus).
build_prometheus_operator() {
  require_pin prometheus-operator github.com/prometheus-operator/prometheus-operator "$PROMETHEUS_OPERATOR_VERSION"
  local d="$cache/prometheus-operator" V="$PROMETHEUS_OPERATOR_VERSION"
  mkdir -p "$d"
  local v="-X github.com/prometheus/common/version.Version=${V#v} -X github.com/prometheus/common/version.Revision=$V -X github.com/prometheus/common/version.Branch=HEAD"
  build_go "$d/operator-$V" prometheus-operator \
    github.com/prometheus-operator/prometheus-operator/cmd/operator "$v"
  build_go "$d/prometheus-config-reloader-$V" prometheus-operator \
    github.com/prometheus-operator/prometheus-operator/cmd/prometheus-config-reloader "$v"
  local src out="$d/manifests-$V" stamp
  src="$(cd "$here/prometheus-operator" && go mod download github.com/prometheus-operator/prometheus-operator &&
    go list -m -f '{{.Dir}}' github.com/prometheus-operator/prometheus-operator)"
  [[ -d "$src/example/prometheus-operator-crd" ]] || die "no example/prometheus-operator-crd in $src"
  stamp="$(stamp_of "$src/example/prometheus-operator-crd"/*.yaml \
    "$src/example/rbac/prometheus-operator/prometheus-operator-cluster-role.yaml" \
    "$src/example/rbac/prometheus/prometheus-cluster-role.yaml")"
  if fresh "$out" "$stamp"; then
    log "prometheus-operator manifests up to date"
    return
  fi
  rm -rf "$out.tmp.$$"
  mkdir -p "$out.tmp.$$/crd"
  cp "$src/example/prometheus-operator-crd"/*.yaml "$out.tmp.$$/crd/"
  cp "$src/example/rbac/prometheus-operator/prometheus-operator-cluster-role.yaml" "$out.tmp.$$/operator-cluster-role.yaml"
  cp "$src/example/rbac/prometheus/prometheus-cluster-role.yaml" "$out.tmp.$$/prometheus-cluster-role.yaml"
  chmod -R u+w "$out.tmp.$$"
  rm -rf "$out" "$out.stamp"
  mv "$out.tmp.$$" "$out"
  echo "$stamp" >"$out.stamp"
  log "copied prometheus-operator manifests from $src"
}

image() { # out image-name rootfs-builder entrypoint...
  local out="$1" name="$2" builder="$3"; shift 3
  local stamp
  stamp="$(stamp_of "$here/oci_archive.py" "$name" "$("$builder" stamp)" "$@")"
  if fresh "$out" "$stamp"; then
    log "$(basename "$out") up to date"
    return
  fi
  local rootfs="$cache/images/rootfs.$$"
  rm -rf "$rootfs"
  mkdir -p "$rootfs"
  "$builder" fill "$rootfs"
  python3 "$here/oci_archive.py" "$rootfs" "$name" "$out.tmp.$$" --entrypoint "$@" >/dev/null
  rm -rf "$rootfs"
  mv -f "$out.tmp.$$" "$out"
  echo "$stamp" >"$out.stamp"
  log "packed $(basename "$out") ($name)"
}

pause_rootfs() { # stamp | fill DIR
  case "$1" in
  stamp) cat "$cache/bin/pause.stamp" ;;
  fill) install -m 0755 "$cache/bin/pause" "$2/pause" ;;
  esac
}

# A busybox userland (Debian's busybox-static) with /etc files for a non-root user.
busybox_rootfs() { # stamp | fill DIR
  local bb=/bin/busybox
  # ldd fails on a static executable: the image has no libc to load one with.
  [[ -x "$bb" ]] && ! ldd "$bb" >/dev/null 2>&1 ||
    die "$bb is missing or not static: apt-get install busybox-static"
  case "$1" in
  stamp) sha256sum "$bb" ;;
  fill)
    mkdir -p "$2/bin" "$2/etc" "$2/tmp" "$2/root"
    chmod 1777 "$2/tmp"
    install -m 0755 "$bb" "$2/bin/busybox"
    local applet
    for applet in $("$bb" --list); do
      [[ "$applet" == busybox ]] || ln -s busybox "$2/bin/$applet"
    done
    printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' >"$2/etc/passwd"
    printf 'root:x:0:\nnogroup:x:65534:\n' >"$2/etc/group"
    ;;
  esac
}

# Static binaries only (build_go links with CGO_ENABLED=0): the images have no libc.
static_binary() { # path
  # ldd fails on a static executable.
  if [[ ! -x "$1" ]] || ldd "$1" >/dev/null 2>&1; then die "$1 is missing or not static"; fi
}
# The Prometheus image the Prometheus Operator runs: the server as the entrypoint (the
# operator gives only args), a /prometheus storage dir and /etc/prometheus, as in upstream's
# image; runs as nobody unless the pod says otherwise.
prometheus_rootfs() { # stamp | fill DIR
  static_binary "$cache/bin/prometheus"
  case "$1" in
  stamp) cat "$cache/bin/prometheus.stamp" ;;
  fill)
    mkdir -p "$2/bin" "$2/etc/prometheus" "$2/prometheus" "$2/tmp"
    chmod 1777 "$2/prometheus" "$2/tmp"
    install -m 0755 "$cache/bin/prometheus" "$2/bin/prometheus"
    printf 'root:x:0:0:root:/:/bin/false\nnobody:x:65534:65534:nobody:/:/bin/false\n' >"$2/etc/passwd"
    printf 'root:x:0:\nnogroup:x:65534:\n' >"$2/etc/group"
    ;;
  esac
}
# The operator runs it as /bin/prometheus-config-reloader (its command is set by the operator).
config_reloader_rootfs() { # stamp | fill DIR
  local bin="$cache/prometheus-operator/prometheus-config-reloader-$PROMETHEUS_OPERATOR_VERSION"
  static_binary "$bin"
  case "$1" in
  stamp) cat "$bin.stamp" ;;
  fill)
    mkdir -p "$2/bin" "$2/etc" "$2/tmp"
    chmod 1777 "$2/tmp"
    install -m 0755 "$bin" "$2/bin/prometheus-config-reloader"
    printf 'root:x:0:0:root:/:/bin/false\nnobody:x:65534:65534:nobody:/:/bin/false\n' >"$2/etc/passwd"
    printf 'root:x:0:\nnogroup:x:65534:\n' >"$2/etc/group"
    ;;
  esac
}

# kubectl alone as the entrypoint, like registry.k8s.io/kubectl (the chart's test pod gives
# `kubectl wait ...` as its command); runs as nobody, read-only root file system.
kubectl_rootfs() { # stamp | fill DIR
  static_binary "$cache/bin/kubectl"
  case "$1" in
  stamp) cat "$cache/bin/kubectl.stamp" ;;
  fill)
    mkdir -p "$2/bin" "$2/etc" "$2/tmp"
    chmod 1777 "$2/tmp"
    install -m 0755 "$cache/bin/kubectl" "$2/bin/kubectl"
    printf 'root:x:0:0:root:/:/bin/false\nnobody:x:65534:65534:nobody:/:/bin/false\n' >"$2/etc/passwd"
    printf 'root:x:0:\nnogroup:x:65534:\n' >"$2/etc/group"
    ;;
  esac
}

build_images() {
  build_go "$cache/bin/pause" pause . ""
  image "$cache/images/pause.tar" "$PAUSE_IMAGE" pause_rootfs /pause
  image "$cache/images/busybox.tar" "$BUSYBOX_IMAGE" busybox_rootfs /bin/sh
  build_prometheus
  build_prometheus_operator
  image "$cache/images/prometheus.tar" "$PROMETHEUS_IMAGE" prometheus_rootfs /bin/prometheus --user 65534:65534
  image "$cache/images/prometheus-config-reloader.tar" "$PROMETHEUS_CONFIG_RELOADER_IMAGE" config_reloader_rootfs \
    /bin/prometheus-config-reloader --user 65534:65534
  build_kube
  image "$cache/images/kubectl.tar" "$KUBECTL_IMAGE" kubectl_rootfs /bin/kubectl --user 65534:65534
}

case "${1:-all}" in
kube) build_kube ;;
runtime) build_runtime ;;
coredns) build_coredns ;;
prometheus) build_prometheus ;;
kueue) build_kueue ;;
prometheus-operator) build_prometheus_operator ;;
images) build_images ;;
all) build_kube; build_runtime; build_coredns; build_prometheus; build_kueue; build_prometheus_operator; build_images ;;
*) die "usage: $0 [all|kube|runtime|coredns|prometheus|kueue|prometheus-operator|images]" ;;
esac
echo "$cache"
