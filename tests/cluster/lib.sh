# Shared by up.sh and down.sh: the cluster's fixed names and paths, its state file,
# and process ownership checks. Sourced, not run.
# shellcheck shell=bash
# shellcheck source=versions.sh
source "$(dirname "${BASH_SOURCE[0]}")/versions.sh"

KUBECTL="${KUBECTL:-kubectl}"
BRIDGE=ddp3d0
POD_SUBNET=10.88.0.0/24
GATEWAY=10.88.0.1
NODE_NAME=ddp3d-node
# Names the DIR whose cluster holds the bridge (one cluster per machine).
MACHINE_OWNER=/run/ddp3d-cluster.dir

# The kernel settings every kubelet sets on its node (protectKernelDefaults: false); up.sh
# saves this machine's values and down.sh puts them back.
KUBELET_SYSCTLS=(vm/overcommit_memory vm/panic_on_oom kernel/panic kernel/panic_on_oops kernel/keys/root_maxkeys kernel/keys/root_maxbytes)

die() { echo "cluster: $*" >&2; exit 1; }
log() { echo "cluster: $*" >&2; }

cluster_paths() { # dir — sets the per-DIR paths
  # Unix socket paths are limited to 108 bytes, DIR may be long: sockets and
  # containerd's state live in a short per-DIR folder under /run.
  RUN="/run/ddp3d-cluster-$(printf '%s' "$1" | sha256sum | cut -c1-8)"
  CONTAINERD_SOCK="$RUN/containerd.sock"
}

write_cluster_env() { # (globals)
  cat >"$dir/cluster.env.tmp" <<EOT
CLUSTER_DIR=$dir
CACHE=${CACHE:-}
RUN=$RUN
CONTAINERD_SOCK=$CONTAINERD_SOCK
CONTAINERD_PID=${CONTAINERD_PID:-}
KCM_PID=${KCM_PID:-}
KCM_PORT=${KCM_PORT:-}
SCHEDULER_PID=${SCHEDULER_PID:-}
SCHEDULER_PORT=${SCHEDULER_PORT:-}
KUBELET_PID=${KUBELET_PID:-}
KUBELET_PORT=${KUBELET_PORT:-}
KUBELET_HEALTHZ_PORT=${KUBELET_HEALTHZ_PORT:-}
COREDNS_PID=${COREDNS_PID:-}
KUBE_PROXY_PID=${KUBE_PROXY_PID:-}
KUBE_PROXY_HEALTHZ_PORT=${KUBE_PROXY_HEALTHZ_PORT:-}
WATCHDOG_PID=${WATCHDOG_PID:-}
COREDNS_HEALTH_PORT=${COREDNS_HEALTH_PORT:-}
COREDNS_READY_PORT=${COREDNS_READY_PORT:-}
NODE_NAME=$NODE_NAME
CLUSTER_DNS=$GATEWAY
POD_SUBNET=$POD_SUBNET
BRIDGE=$BRIDGE
EOT
  mv -f "$dir/cluster.env.tmp" "$dir/cluster.env"
}

load_cluster_env() {
  # shellcheck disable=SC1091
  source "$dir/cluster.env"
}
load_control_plane_env() {
  # shellcheck disable=SC1091
  source "$dir/env"
}

kubectl_admin() { KUBECACHEDIR="$dir/kube-cache" "$KUBECTL" --kubeconfig "$dir/kubeconfig" "$@"; }
ctr_() { "$CACHE/bin/ctr" --address "$CONTAINERD_SOCK" --namespace k8s.io "$@"; }

# True when PID is alive and an argument is a path under DIR or RUN, as every process
# of the cluster has (a recycled PID, a cluster in DIR2 = DIR + suffix, or up.sh DIR
# itself is never signalled).
owns() { # pid dir
  [[ -n "$1" && -r "/proc/$1/cmdline" ]] || return 1
  local cmd
  cmd=" $({ tr '\0' ' ' <"/proc/$1/cmdline"; } 2>/dev/null)"
  [[ "$cmd" == *" $2/"* || "$cmd" == *" $RUN/"* ]]
}

# Every live process of this cluster (kubelet, containerd, shims, CoreDNS, ...).
owned_pids() { # dir
  local p
  for p in /proc/[0-9]*; do
    p="${p#/proc/}"
    [[ "$p" != "$$" && "$p" != "$BASHPID" ]] && owns "$p" "$1" && echo "$p"
  done
  return 0
}

# Mount points under DIR or RUN, deepest first.
owned_mounts() { # dir
  awk -v a="$1/" -v b="$RUN/" 'index($5, a) == 1 || index($5, b) == 1 || $5 == substr(b, 1, length(b) - 1) { print $5 }' \
    /proc/self/mountinfo | awk '{ print length($0) " " $0 }' | sort -rn | cut -d' ' -f2-
}
