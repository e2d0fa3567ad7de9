#!/usr/bin/env bash
# Builds the dev images from the binaries tools/setup.sh already built (nothing is compiled
# again), with buildah: no daemon, no registry. Writes OCI archives and their stamps:
#   ${DDP3D_CACHE:-$HOME/.cache/ddp3d}/images/worker-dev.tar    docker.io/ddp3d/worker:dev
#       docker/worker-cpu.Dockerfile --target prebuilt (CPU LibTorch)
#   ${DDP3D_CACHE:-$HOME/.cache/ddp3d}/images/operator-dev.tar  docker.io/ddp3d/operator:dev
#       docker/operator.Dockerfile --target prebuilt
#   ${DDP3D_CACHE:-$HOME/.cache/ddp3d}/images/worker-cuda-dev.tar  docker.io/ddp3d/worker:dev-cuda
#       docker/worker-cpu.Dockerfile --target prebuilt-cuda (only with --cuda or --only
#       worker-cuda: the CUDA build's `ddp3d` and the whole CUDA wheel, about 4 GB)
# (docker.io/ddp3d/...: what Kubernetes normalises the pods' `ddp3d/worker:dev` to.)
#
#   tools/build_images.sh [--only worker|operator|worker-cuda] [--cuda] [--load CONTAINERD_SOCK]
#                         [--load-cluster CLUSTER_DIR] [--print]
#     --only   build one image
#     --cuda   the CUDA worker: compiles `ddp3d` with CUDA in $DDP3D_CUDA_BUILD_DIR (default
#              build-cuda/; tools/setup.sh --worker with DDP3D_WITH_CUDA=1, no GPU needed),
#              then builds that image alone
#     --load   import the archives into the containerd at CONTAINERD_SOCK (namespace
#              k8s.io) with $CTR (default: the test cluster's ctr, else ctr on PATH);
#              skipped when that containerd already has the same manifest
#     --load-cluster  the same into every node's containerd of the test cluster that
#              tests/cluster/up.sh CLUSTER_DIR started (NODE_<i>_CONTAINERD_SOCK in its
#              cluster.env); a powered-off node (node.sh) is skipped, with a warning
#     --print  print the archives' paths on stdout, one a line (after building)
#
# The base image is Debian bookworm made here by mmdebstrap (minbase, merged /usr, dpkg
# excludes like debian:bookworm-slim), from deb.debian.org (DDP3D_DEBIAN_MIRROR). Every
# artefact is keyed by a stamp of its inputs (Dockerfile, binary, tools/ and configs/, base,
# these scripts, buildah's version): a second run with unchanged inputs only hashes them.
# Delete images/base/ to refresh the base's packages. Concurrent callers queue on a flock.
# Steps and their timings go to stderr. Needs root (buildah --isolation chroot, mmdebstrap).
# Env: DDP3D_BUILD_DIR (default build/), DDP3D_STORAGE_DRIVER (overlay or vfs; default
# overlay when this filesystem can mount it).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${DDP3D_CACHE:-$HOME/.cache/ddp3d}"
IMAGES="$CACHE/images"
BUILD_DIR="${DDP3D_BUILD_DIR:-$ROOT/build}"
SUITE=bookworm
MIRROR="${DDP3D_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
SECURITY_MIRROR="${DDP3D_DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}"

log() { echo "build-images: $*" >&2; }
die() { echo "build-images: $*" >&2; exit 1; }
usage() { sed -n '/^#   tools/,/^#     --print/p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }

only="" cuda=0 socks=() cluster_dir="" print=0
while (($#)); do
  case "$1" in
  --only) [[ "${2:-}" =~ ^(worker|operator|worker-cuda)$ ]] || die "--only takes worker, operator or worker-cuda"
    only="$2"; shift 2 ;;
  --cuda) cuda=1; shift ;;
  --load) [[ -n "${2:-}" ]] || die "--load takes the containerd socket's path"; socks+=("$2"); shift 2 ;;
  --load-cluster) [[ -n "${2:-}" ]] || die "--load-cluster takes the test cluster's DIR"; cluster_dir="$2"; shift 2 ;;
  --print) print=1; shift ;;
  -h|--help) usage ;;
  *) echo "build-images: unknown argument $1" >&2; usage ;;
  esac
done
names=(worker operator)
[[ -n "$only" ]] && names=("$only")
CUDA_BUILD_DIR="${DDP3D_CUDA_BUILD_DIR:-$ROOT/build-cuda}"
if ((cuda)); then
  [[ -z "$only" || "$only" == worker-cuda ]] || die "--cuda builds the CUDA worker alone, not --only $only"
  names=(worker-cuda)
fi

# What is missing, all at once, before any work.
missing=()
[[ $(id -u) -eq 0 ]] || die "must run as root (buildah --isolation chroot, mmdebstrap's root mode)"
for t in buildah mmdebstrap; do
  command -v "$t" >/dev/null || missing+=("$t not installed: apt-get install $t")
done
declare -A BIN=([worker]="$BUILD_DIR/worker/ddp3d" [operator]="$BUILD_DIR/operator/ddp3d-operator"
  [worker-cuda]="$CUDA_BUILD_DIR/worker/ddp3d")
declare -A DOCKERFILE=([worker]=docker/worker-cpu.Dockerfile [operator]=docker/operator.Dockerfile
  [worker-cuda]=docker/worker-cpu.Dockerfile)
declare -A TARGET=([worker]=prebuilt [operator]=prebuilt [worker-cuda]=prebuilt-cuda)
declare -A REF=([worker]=docker.io/ddp3d/worker:dev [operator]=docker.io/ddp3d/operator:dev
  [worker-cuda]=docker.io/ddp3d/worker:dev-cuda)
# runtime_payload.sh's options: a CUDA build dlopen()s libraries ldd cannot see.
declare -A PAYLOAD_OPTS=([worker]="" [operator]="" [worker-cuda]=--whole-wheel)
if ((cuda)) && ((!${#missing[@]})); then
  log "worker-cuda: compiling ddp3d with CUDA in $CUDA_BUILD_DIR (tools/setup.sh --worker)"
  DDP3D_WITH_CUDA=1 DDP3D_BUILD_DIR="$CUDA_BUILD_DIR" bash "$ROOT/tools/setup.sh" --worker ||
    die "the CUDA build failed (see above)"
fi
for n in "${names[@]}"; do
  if [[ ! -x "${BIN[$n]}" ]]; then
    if [[ "$n" == worker-cuda ]]; then
      missing+=("${BIN[$n]} not built: run tools/build_images.sh --cuda (or set DDP3D_CUDA_BUILD_DIR)")
    else
      missing+=("${BIN[$n]} not built: run tools/setup.sh (or set DDP3D_BUILD_DIR)")
    fi
  elif [[ "$n" == worker-cuda ]] && ! ldd "${BIN[$n]}" | grep -q 'libtorch_cuda\.so'; then
    missing+=("${BIN[$n]} is not a CUDA build (no libtorch_cuda.so): DDP3D_WITH_CUDA=1 was not set for $CUDA_BUILD_DIR")
  fi
done
if [[ -n "$cluster_dir" ]]; then
  if [[ ! -f "$cluster_dir/cluster.env" ]]; then
    missing+=("--load-cluster $cluster_dir: no cluster.env there (start one with tests/cluster/up.sh $cluster_dir)")
  else
    # Every node's socket, and whether it is powered on (POWER=off after node.sh poweroff).
    while IFS=' ' read -r node_sock node_power node_name; do
      if [[ "$node_power" == off ]]; then
        log "--load-cluster: node $node_name is powered off; not loading it"
      else
        socks+=("$node_sock")
      fi
    done < <(bash -c 'set -a; source "$1"; for ((i = 0; i < ${NODE_COUNT:-1}; i++)); do
        s="NODE_${i}_CONTAINERD_SOCK" p="NODE_${i}_POWER" n="NODE_${i}_NAME"
        echo "${!s:-$CONTAINERD_SOCK} ${!p:-on} ${!n:-$NODE_NAME}"; done' _ "$cluster_dir/cluster.env")
  fi
fi
if ((${#socks[@]})); then
  if [[ -z "${CTR:-}" ]]; then
    k8s_version="$(source "$ROOT/tests/cluster/versions.sh" && echo "$K8S_VERSION")"
    CTR="$CACHE/cluster/$k8s_version/bin/ctr"
    [[ -x "$CTR" ]] || CTR="$(command -v ctr || true)"
  fi
  [[ -n "$CTR" && -x "$CTR" ]] || missing+=("no ctr for --load: set CTR, or build the test cluster's (tests/cluster/build.sh runtime)")
  for sock in "${socks[@]}"; do
    [[ -S "$sock" ]] || missing+=("--load $sock: not a socket (is containerd running?)")
  done
fi
if ((${#missing[@]})); then
  printf 'build-images: %s\n' "${missing[@]}" >&2
  exit 1
fi

mkdir -p "$IMAGES"
exec 9>"$IMAGES/.lock"
if ! flock -n 9; then
  log "waiting for another build_images.sh ($IMAGES/.lock)"
  flock 9
fi

now_us() { echo "${EPOCHREALTIME/./}"; }
timed() { # what command...: runs it, logs how long it took
  local what="$1" t0; shift
  t0="$(now_us)"
  "$@"
  local ms=$((($(now_us) - t0) / 1000))
  log "$what: $((ms / 1000)).$(printf '%03d' $((ms % 1000)))s"
}
# A stamp ties a cached artefact to the exact inputs it was built from (as in
# tests/cluster/build.sh): files by content, other arguments as strings.
stamp_of() {
  local a
  for a in "$@"; do if [[ -f "$a" ]]; then cat "$a"; else echo "$a"; fi; done | sha256sum | cut -d' ' -f1
}
fresh() { [[ -e "$1" && "$(cat "$1.stamp" 2>/dev/null)" == "$2" ]]; }
tree_hash() { # dirs under ROOT, as the image's COPY sees them (no __pycache__)
  (cd "$ROOT" && find "$@" -type f ! -path '*/__pycache__/*' -print0 | sort -z | xargs -0 sha256sum) |
    sha256sum | cut -d' ' -f1
}

# Storage of its own under the cache; overlay where the kernel and this filesystem mount it
# (the driver is fixed once the store exists), else vfs (copies every layer, but works anywhere).
STORAGE="$IMAGES/storage"
if [[ -f "$STORAGE/.ddp3d-driver" ]]; then
  driver="$(cat "$STORAGE/.ddp3d-driver")"
  [[ -z "${DDP3D_STORAGE_DRIVER:-}" || "$DDP3D_STORAGE_DRIVER" == "$driver" ]] ||
    die "$STORAGE uses $driver, not DDP3D_STORAGE_DRIVER=$DDP3D_STORAGE_DRIVER: remove it to switch"
else
  driver="${DDP3D_STORAGE_DRIVER:-}"
  if [[ -z "$driver" ]]; then
    probe="$(mktemp -d "$IMAGES/.overlay-probe.XXXXXX")"
    driver=vfs
    if mkdir "$probe"/{l,u,w,m} &&
      mount -t overlay overlay -o "lowerdir=$probe/l,upperdir=$probe/u,workdir=$probe/w" "$probe/m" 2>/dev/null; then
      # Never leave the probe mounted: rm -rf would then reach into the overlay.
      umount "$probe/m" || umount -l "$probe/m"
      driver=overlay
    fi
    rm -rf "$probe"
  fi
  mkdir -p "$STORAGE"
  echo "$driver" >"$STORAGE/.ddp3d-driver"
  log "buildah storage: $STORAGE ($driver)"
fi
# Run state (locks, mount counts) on /run: it must not outlive a reboot.
RUNROOT="/run/ddp3d-buildah/$(echo -n "$STORAGE" | sha256sum | cut -c1-12)"
bh() { buildah --root "$STORAGE" --runroot "$RUNROOT" --storage-driver "$driver" "$@"; }

# 1. The Debian base: a rootfs tarball from mmdebstrap, imported as a one-layer image.
# (From a hash of mmdebstrap's arguments: a new day's packages alone do not rebuild it.)
base_tar="$IMAGES/base/$SUITE-minbase.tar"
mmdebstrap_args=(--variant=minbase --format=tar --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr
  # debian:*-slim's excludes; kept in /etc/dpkg/dpkg.cfg.d, so they apply to RUN apt-get too.
  --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*'
  --dpkgopt='path-exclude=/usr/share/info/*' --dpkgopt='path-exclude=/usr/share/doc/*'
  --dpkgopt='path-include=/usr/share/doc/*/copyright'
  # and their apt hook that deletes downloaded .debs: `RUN apt-get install` layers stay small.
  --customize-hook='cat >"$1/etc/apt/apt.conf.d/docker-clean" <<EOF
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF'
  # (with those two set, mmdebstrap's `apt-get clean` no longer removes the caches made so far)
  --customize-hook='rm -f "$1"/var/cache/apt/*.bin'
  "$SUITE" "$base_tar.tmp"
  "deb $MIRROR $SUITE main" "deb $MIRROR $SUITE-updates main" "deb $SECURITY_MIRROR $SUITE-security main")
base_stamp="$(stamp_of "$(mmdebstrap --version)" "${mmdebstrap_args[@]}")"
if ! fresh "$base_tar" "$base_stamp"; then
  mkdir -p "$IMAGES/base"
  rm -f "$base_tar.tmp"
  run_mmdebstrap() { nice -n 10 mmdebstrap "${mmdebstrap_args[@]}" >"$IMAGES/base/mmdebstrap.log" 2>&1; }
  timed "base: mmdebstrap $SUITE (minbase) from $MIRROR" run_mmdebstrap || {
    tail -n 20 "$IMAGES/base/mmdebstrap.log" >&2
    die "mmdebstrap failed, log in $IMAGES/base/mmdebstrap.log (is $MIRROR reachable? DDP3D_DEBIAN_MIRROR names another)"
  }
  sha256sum "$base_tar.tmp" | cut -d' ' -f1 >"$base_tar.sha256"
  mv -f "$base_tar.tmp" "$base_tar"
  echo "$base_stamp" >"$base_tar.stamp"
fi
# The images are keyed by the base's content (a refreshed base has newer packages).
[[ -s "$base_tar.sha256" ]] || sha256sum "$base_tar" | cut -d' ' -f1 >"$base_tar.sha256"
base_sha="$(cat "$base_tar.sha256")"
base_ref="localhost/ddp3d/base:$SUITE-${base_sha:0:12}"
import_base() {
  local c
  c="$(bh from --quiet scratch)"
  bh add --quiet "$c" "$base_tar" / >/dev/null
  bh config --os linux --arch amd64 --cmd /bin/bash \
    --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$c"
  bh commit --quiet --rm "$c" "$base_ref" >/dev/null
}
ensure_base() { # into the store, once an image is built on it
  if ! bh inspect --type image "$base_ref" >/dev/null 2>&1; then
    timed "base: import $(basename "$base_tar") as $base_ref" import_base
  fi
}

# 2. The images.
export_archive() { # local-image ref out: an OCI archive containerd imports under ref
  local image="$1" ref="$2" out="$3" dir="$3.layout"
  rm -rf "$dir"
  bh push --quiet "$image" "oci:$dir:$ref" >&2
  # buildah names the manifest by org.opencontainers.image.ref.name only; `ctr images
  # import` names images by io.containerd.image.name (tests/cluster/oci_archive.py sets it).
  python3 - "$dir/index.json" "$ref" <<'EOF'
import json, sys
path, ref = sys.argv[1:]
with open(path) as f:
    index = json.load(f)
for m in index["manifests"]:
    m.setdefault("annotations", {}).update(
        {"io.containerd.image.name": ref, "org.opencontainers.image.ref.name": ref})
    m.setdefault("platform", {"architecture": "amd64", "os": "linux"})
with open(path, "w") as f:
    json.dump(index, f)
EOF
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$dir" \
    -cf "$out.tmp" oci-layout index.json blobs
  rm -rf "$dir"
  mv -f "$out.tmp" "$out"
}

build_image() { # name
  local n="$1" bin="${BIN[$1]}" dockerfile="$ROOT/${DOCKERFILE[$1]}"
  local out="$IMAGES/$n-dev.tar" ref="${REF[$1]}" local_ref="localhost/ddp3d/$n:dev"
  local ctx_dirs=() tree="" stamp
  if [[ "$n" == worker* ]]; then
    ctx_dirs=(tools configs)
    tree="$(tree_hash "${ctx_dirs[@]}")"
  fi
  stamp="$(stamp_of "$ref" "$dockerfile" "${TARGET[$n]}" "$bin" "$base_sha" "${BASH_SOURCE[0]}" \
    "$ROOT/docker/runtime_payload.sh" "$(buildah --version)" "$tree")"
  if fresh "$out" "$stamp"; then
    log "$n: up to date ($out)"
    return
  fi
  ensure_base
  # The context --target prebuilt reads: payload/ and what the runtime stage COPYs.
  local ctx="$IMAGES/context-$n"
  rm -rf "$ctx"
  mkdir -p "$ctx"
  timed "$n: payload (binary + its non-Debian libraries)" \
    bash "$ROOT/docker/runtime_payload.sh" "$bin" "$ctx/payload" --link ${PAYLOAD_OPTS[$n]:+"${PAYLOAD_OPTS[$n]}"}
  if ((${#ctx_dirs[@]})); then
    (cd "$ROOT" && tar --exclude=__pycache__ -cf - "${ctx_dirs[@]}") | tar -xf - -C "$ctx"
  fi
  # --network host: the runtime stage's apt-get; chroot: no runc or namespaces needed.
  timed "$n: buildah build (${DOCKERFILE[$n]} --target ${TARGET[$n]})" \
    nice -n 10 buildah --root "$STORAGE" --runroot "$RUNROOT" --storage-driver "$driver" \
    build --quiet --isolation chroot --network host --pull=never --target "${TARGET[$n]}" \
    --build-arg BASE_IMAGE="$base_ref" -f "$dockerfile" -t "$local_ref" "$ctx" >&2
  rm -rf "$ctx"
  timed "$n: OCI archive $out ($ref)" export_archive "$local_ref" "$ref" "$out"
  echo "$stamp" >"$out.stamp"
  # Superseded dev images and intermediate stages would pile up in the store.
  bh rmi --prune >/dev/null 2>&1 || true
  log "$n: $(bh images --format '{{.Size}}' "$local_ref" | head -1) in the store, $(du -h "$out" | cut -f1) archive"
}

manifest_digest() { # archive
  tar -xOf "$1" index.json | python3 -c 'import json,sys; print(json.load(sys.stdin)["manifests"][0]["digest"])'
}

load_image() { # name sock
  local n="$1" sock="$2" out="$IMAGES/$1-dev.tar" ref="${REF[$1]}" digest
  digest="$(manifest_digest "$out")"
  if "$CTR" --address "$sock" -n k8s.io images ls "name==$ref" 2>/dev/null | grep -q "$digest"; then
    log "$n: $ref already in $sock"
    return
  fi
  timed "$n: import into $sock" "$CTR" --address "$sock" -n k8s.io images import --local "$out" >&2
}

for n in "${names[@]}"; do
  build_image "$n"
done
# Bases of earlier stamps (an image still built on one keeps it).
for old in $(bh images --format '{{.Name}}:{{.Tag}}' | grep '^localhost/ddp3d/base:' | grep -vxF "$base_ref" || true); do
  bh rmi "$old" >/dev/null 2>&1 || true
done
for sock in "${socks[@]}"; do
  for n in "${names[@]}"; do
    load_image "$n" "$sock"
  done
done
if ((print)); then
  for n in "${names[@]}"; do
    echo "$IMAGES/$n-dev.tar"
  done
fi
