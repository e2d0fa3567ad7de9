# Shared by up.sh, node.sh and down.sh: the cluster's fixed names and paths, its state
# file, process ownership checks, and how one node (a containerd plus a kubelet) starts.
# Sourced, not run.
# shellcheck shell=bash
# The constants are used by the scripts that source this; dir is theirs (the cluster's DIR).
# shellcheck disable=SC2034,SC2154
# shellcheck source=versions.sh
source "$(dirname "${BASH_SOURCE[0]}")/versions.sh"

KUBECTL="${KUBECTL:-kubectl}"
# Node 0's bridge, subnet and address: the control plane (kube-apiserver, CoreDNS) lives
# on 10.88.0.1 whatever the node count. Node i has bridge ddp3d<i>, 10.88.<i>.0/24 and
# address 10.88.<i>.1 (node_init).
BRIDGE=ddp3d0
POD_SUBNET=10.88.0.0/24
GATEWAY=10.88.0.1
# Every node's subnet lies in it: kube-proxy's clusterCIDR, and the blackhole route that
# keeps a powered-off node's addresses (and any other 10.88 address) on this machine.
CLUSTER_CIDR=10.88.0.0/16
BLACKHOLE_METRIC=4242
MAX_NODES=8
# Names the DIR whose cluster holds the bridges (one cluster per machine).
MACHINE_OWNER=/run/ddp3d-cluster.dir

# The kernel settings every kubelet sets on its node (protectKernelDefaults: false), and
# IPv4 forwarding (pods on one node's bridge reach another's through this machine; the CNI
# bridge plugin turns it on for any gateway bridge): up.sh saves this machine's values and
# down.sh puts them back.
KUBELET_SYSCTLS=(vm/overcommit_memory vm/panic_on_oom kernel/panic kernel/panic_on_oops kernel/keys/root_maxkeys kernel/keys/root_maxbytes)
SAVED_SYSCTLS=("${KUBELET_SYSCTLS[@]}" net/ipv4/ip_forward)
# The filter chain that keeps forwarded pod traffic between the cluster's bridges: a
# packet from a pod to any other interface, or from another interface to a pod, is dropped.
GUARD_CHAIN=DDP3D-FORWARD

# Kueue's metrics server reads its certificate from this fixed path when its internal
# certificate management is off (kueue.sh writes it, with a file naming the cluster's DIR).
KUEUE_METRICS_CERT_DIR=/etc/kueue/metrics/certs

die() { echo "cluster: $*" >&2; exit 1; }
log() { echo "cluster: $*" >&2; }

# Unix socket paths are limited to 108 bytes, DIR may be long: sockets and containerd's
# state live in a short per-DIR folder under /run.
run_dir_of() { echo "/run/ddp3d-cluster-$(printf '%s' "$1" | sha256sum | cut -c1-8)"; }

cluster_paths() { # dir — sets the per-DIR paths
  RUN="$(run_dir_of "$1")"
  CONTAINERD_SOCK="$RUN/containerd.sock"
}

# Per-node values live in NODE_<i>_<KEY> variables (node_init sets the fixed ones; nv reads
# one, set_nv sets one) and go to cluster.env as such, beside the legacy node-0 keys.
NODE_KEYS=(NAME IP SUBNET BRIDGE DIR RUN LOGS CGROUP_ROOT CONTAINERD_SOCK CONTAINERD_PID
  KUBELET_PID KUBELET_PORT KUBELET_HEALTHZ_PORT POWER CAPACITY)
nv() { local v="NODE_$1_$2"; printf '%s' "${!v:-}"; }
set_nv() { printf -v "NODE_$1_$2" '%s' "$3"; }

node_name_of() { # index count
  if (($2 == 1)); then echo ddp3d-node; else echo "ddp3d-node-$1"; fi
}

# Fixed per-node names and paths. Node 0 keeps the one-node layout (DIR/kubelet,
# DIR/containerd, DIR/cni, sockets in RUN, logs in DIR/logs, the root cgroup); node i>0
# has DIR/nodes/NAME/{kubelet,containerd,cni}, RUN/nI, DIR/logs/NAME and cgroup /NAME.
node_init() { # index (uses NODE_COUNT, dir, RUN)
  local i="$1" name
  name="$(node_name_of "$i" "$NODE_COUNT")"
  set_nv "$i" NAME "$name"
  set_nv "$i" IP "10.88.$i.1"
  set_nv "$i" SUBNET "10.88.$i.0/24"
  set_nv "$i" BRIDGE "ddp3d$i"
  if ((i == 0)); then
    set_nv "$i" DIR "$dir"; set_nv "$i" RUN "$RUN"; set_nv "$i" LOGS "$dir/logs"
    set_nv "$i" CGROUP_ROOT /
  else
    set_nv "$i" DIR "$dir/nodes/$name"; set_nv "$i" RUN "$RUN/n$i"; set_nv "$i" LOGS "$dir/logs/$name"
    set_nv "$i" CGROUP_ROOT "/$name"
  fi
  set_nv "$i" CONTAINERD_SOCK "$(nv "$i" RUN)/containerd.sock"
}

node_names() { local i; for ((i = 0; i < NODE_COUNT; i++)); do nv "$i" NAME; echo; done; }
node_index() { # name — prints the index, false if no node has that name
  local i
  for ((i = 0; i < NODE_COUNT; i++)); do
    [[ "$(nv "$i" NAME)" == "$1" ]] && { echo "$i"; return 0; }
  done
  return 1
}

write_cluster_env() { # (globals)
  local i k
  {
    cat <<EOT
CLUSTER_DIR=$dir
CACHE=${CACHE:-}
RUN=$RUN
CONTAINERD_SOCK=$(nv 0 CONTAINERD_SOCK)
CONTAINERD_PID=$(nv 0 CONTAINERD_PID)
KCM_PID=${KCM_PID:-}
KCM_PORT=${KCM_PORT:-}
SCHEDULER_PID=${SCHEDULER_PID:-}
SCHEDULER_PORT=${SCHEDULER_PORT:-}
KUBELET_PID=$(nv 0 KUBELET_PID)
KUBELET_PORT=$(nv 0 KUBELET_PORT)
KUBELET_HEALTHZ_PORT=$(nv 0 KUBELET_HEALTHZ_PORT)
COREDNS_PID=${COREDNS_PID:-}
KUBE_PROXY_PID=${KUBE_PROXY_PID:-}
KUBE_PROXY_HEALTHZ_PORT=${KUBE_PROXY_HEALTHZ_PORT:-}
WATCHDOG_PID=${WATCHDOG_PID:-}
COREDNS_HEALTH_PORT=${COREDNS_HEALTH_PORT:-}
COREDNS_READY_PORT=${COREDNS_READY_PORT:-}
KUEUE_PID=${KUEUE_PID:-}
KUEUE_HEALTH_PORT=${KUEUE_HEALTH_PORT:-}
KUEUE_METRICS_PORT=${KUEUE_METRICS_PORT:-}
KUEUE_WEBHOOK_PORT=${KUEUE_WEBHOOK_PORT:-}
PROMETHEUS_OPERATOR_PID=${PROMETHEUS_OPERATOR_PID:-}
PROMETHEUS_OPERATOR_PORT=${PROMETHEUS_OPERATOR_PORT:-}
NODE_NAME=$(nv 0 NAME)
CLUSTER_DNS=$GATEWAY
POD_SUBNET=$POD_SUBNET
BRIDGE=$BRIDGE
CLUSTER_CIDR=$CLUSTER_CIDR
NODE_COUNT=$NODE_COUNT
NODES=$(node_names | paste -sd, -)
NODE_MONITOR_PERIOD=${NODE_MONITOR_PERIOD:-}
NODE_MONITOR_GRACE_PERIOD=${NODE_MONITOR_GRACE_PERIOD:-}
CLUSTER_FEATURE_GATES=${CLUSTER_FEATURE_GATES:-}
CLUSTER_RUNTIME_CONFIG=${CLUSTER_RUNTIME_CONFIG:-}
EOT
    for ((i = 0; i < NODE_COUNT; i++)); do
      for k in "${NODE_KEYS[@]}"; do echo "NODE_${i}_$k=$(nv "$i" "$k")"; done
    done
  } >"$dir/cluster.env.tmp"
  mv -f "$dir/cluster.env.tmp" "$dir/cluster.env"
}

load_cluster_env() {
  # shellcheck disable=SC1091
  source "$dir/cluster.env"
  # A cluster.env from before multi-node clusters describes one node in the legacy keys.
  NODE_COUNT="${NODE_COUNT:-1}"
  if [[ -z "$(nv 0 NAME)" ]]; then
    node_init 0
    set_nv 0 CONTAINERD_PID "${CONTAINERD_PID:-}"; set_nv 0 KUBELET_PID "${KUBELET_PID:-}"
    set_nv 0 POWER on
  fi
}
load_control_plane_env() {
  # shellcheck disable=SC1091
  source "$dir/env"
}

# For the scripts that act on a cluster up.sh started (kueue.sh, prometheus_operator.sh):
# DIR made absolute in $dir, its paths set and both environments loaded.
attach_cluster() { # dir
  [[ -d "$1" ]] || die "$1 does not exist: start the cluster with up.sh $1 first"
  dir="$(cd "$1" && pwd)"
  cluster_paths "$dir"
  [[ -f "$dir/cluster.env" && -f "$dir/env" ]] || die "no cluster in $dir (up.sh $dir starts one)"
  load_control_plane_env
  load_cluster_env
}

kubectl_admin() { KUBECACHEDIR="$dir/kube-cache" "$KUBECTL" --kubeconfig "$dir/kubeconfig" "$@"; }
ctr_() { "$CACHE/bin/ctr" --address "$CONTAINERD_SOCK" --namespace k8s.io "$@"; }
ctr_node() { local i="$1"; shift; "$CACHE/bin/ctr" --address "$(nv "$i" CONTAINERD_SOCK)" --namespace k8s.io "$@"; }

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

# True while any process still works with the cluster in DIR: one of its own (a path under
# DIR or its run folder in the command line), or a script given DIR itself (up.sh DIR,
# node.sh DIR, the watchdog). False for a cluster whose owner was killed with everything it
# started (SIGKILL, the end of a login session): only its bridges, routes and mounts remain.
cluster_in_use() { # dir
  local p cmd run
  run="$(run_dir_of "$1")"
  for p in /proc/[0-9]*; do
    p="${p#/proc/}"
    [[ "$p" != "$$" && "$p" != "$BASHPID" ]] || continue
    cmd=" $({ tr '\0' ' ' <"/proc/$p/cmdline"; } 2>/dev/null) "
    [[ "$cmd" == *" $1/"* || "$cmd" == *" $1 "* || "$cmd" == *" $run/"* ]] && return 0
  done
  return 1
}

# Mount points under DIR or RUN, deepest first.
owned_mounts() { # dir
  awk -v a="$1/" -v b="$RUN/" 'index($5, a) == 1 || index($5, b) == 1 || $5 == substr(b, 1, length(b) - 1) { print $5 }' \
    /proc/self/mountinfo | awk '{ print length($0) " " $0 }' | sort -rn | cut -d' ' -f2-
}
mounts_under() { # path... — mount points at or under any PATH, deepest first
  local p
  for p in "$@"; do
    awk -v a="$p/" -v b="$p" 'index($5, a) == 1 || $5 == b { print $5 }' /proc/self/mountinfo
  done | sort -u | awk '{ print length($0) " " $0 }' | sort -rn | cut -d' ' -f2-
}
unmount_under() { # path...
  local m
  for m in $(mounts_under "$@"); do
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || log "cannot unmount $m"
  done
}

# containerd-shim sockets live at the fixed /run/containerd/s; a killed shim's would be
# gone after a reboot. Only sockets no process listens on are removed.
clean_stale_shim_sockets() {
  local s
  [[ -d /run/containerd/s ]] || return 0
  for s in /run/containerd/s/*; do
    [[ -S "$s" ]] || continue
    grep -qF " $s" /proc/net/unix || rm -f "$s"
  done
}

# What kueue.sh wrote to the fixed KUEUE_METRICS_CERT_DIR for the cluster in DIR, and the
# folders it made there once empty.
remove_kueue_metrics_certs() { # dir
  [[ "$(cat "$KUEUE_METRICS_CERT_DIR/ddp3d-cluster.dir" 2>/dev/null)" == "$1" ]] || return 0
  rm -f "$KUEUE_METRICS_CERT_DIR"/{tls.crt,tls.key,ddp3d-cluster.dir}
  rmdir "$KUEUE_METRICS_CERT_DIR" /etc/kueue/metrics /etc/kueue 2>/dev/null || true
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# Client and serving certificates from the control plane's CA (ECDSA, as testbin's).
issue_cert() { # name subject extensions
  local pki="$dir/pki" ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1)
  [[ -f "$pki/$1.crt" ]] && return 0
  openssl req "${ec[@]}" -nodes -keyout "$pki/$1.key" -out "$pki/$1.csr" -subj "$2" 2>/dev/null
  printf '%s\n' "$3" >"$pki/$1.ext"
  openssl x509 -req -in "$pki/$1.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
    -out "$pki/$1.crt" -days 30 -extfile "$pki/$1.ext" 2>/dev/null
  rm -f "$pki/$1.csr" "$pki/$1.ext"
  chmod 600 "$pki/$1.key"
}
client_ext="basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth"

write_kubeconfig() { # out cert-name
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: ddp3d-test
  cluster:
    server: $APISERVER_URL
    certificate-authority: $dir/pki/ca.crt
users:
- name: $2
  user:
    client-certificate: $dir/pki/$2.crt
    client-key: $dir/pki/$2.key
contexts:
- name: ddp3d-test
  context:
    cluster: ddp3d-test
    user: $2
current-context: ddp3d-test
EOF
  chmod 600 "$1"
}

start_bg() { # var log command... — setsid'd, appending to LOG (a path, or NAME for DIR/logs/NAME.log)
  local var="$1" logf="$2"; shift 2
  [[ "$logf" == /* ]] || logf="$dir/logs/$logf.log"
  # Without fd 9: node.sh holds its lock there, and a daemon that inherited it would hold
  # the lock for its whole life.
  setsid "$@" </dev/null >>"$logf" 2>&1 9>&- &
  printf -v "$var" '%s' "$!"
  write_cluster_env
}

wait_for() { # what timeout-s pid log command... — poll COMMAND until it succeeds
  local what="$1" timeout="$2" pid="$3" logf="$4"; shift 4
  local deadline=$((SECONDS + timeout))
  while ((SECONDS < deadline)); do
    if [[ -n "$pid" ]] && ! kill -0 "$pid" 2>/dev/null; then
      tail -n 30 "$logf" >&2
      die "$what: process $pid exited (log: $logf)"
    fi
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.5
  done
  tail -n 30 "$logf" >&2
  die "$what not reached after ${timeout}s (log: $logf)"
}

# --- one node: its "NIC" (a bridge holding the node's address), cgroup root, containerd
# and kubelet. up.sh starts every node with these; node.sh poweron starts one again from
# the same files.

# The bridge is the node's network card: its address is the node IP (kubelet address,
# serving certificate) and the gateway of the node's pods. Forwarding between bridges is
# what connects pods on different nodes.
node_bridge_up() { # index
  local i="$1" br ip subnet
  br="$(nv "$i" BRIDGE)" ip="$(nv "$i" IP)" subnet="$(nv "$i" SUBNET)"
  ip link show "$br" >/dev/null 2>&1 || ip link add "$br" type bridge
  ip -4 addr show dev "$br" | grep -qF " $ip/" || ip addr add "$ip/${subnet#*/}" dev "$br"
  ip link set "$br" up
}

# The node's cgroup root: the kubelet's cgroupRoot, under which it makes kubepods/...; it
# must exist in every hierarchy (cgroups v1) before the kubelet starts. Each kubelet
# removes pod cgroups it does not know under its own root only, so distinct roots keep
# one node's cleanup away from another's pods.
node_cgroup_up() { # index
  local root h
  root="$(nv "$1" CGROUP_ROOT)"
  [[ "$root" == / ]] && return 0
  for h in /sys/fs/cgroup/*/; do
    [[ -f "$h/cgroup.procs" && ! -f "$h/cgroup.controllers" ]] || continue  # v1 hierarchies only
    mkdir -p "$h${root#/}"
    if [[ -f "$h/cpuset.cpus" && -z "$(cat "$h${root#/}/cpuset.cpus")" ]]; then
      cat "$h/cpuset.cpus" >"$h${root#/}/cpuset.cpus"
      cat "$h/cpuset.mems" >"$h${root#/}/cpuset.mems"
    fi
  done
}
# The node's cgroups, deepest first (the root itself last for node i>0; node 0's root is
# the machine's, so only its kubepods subtree).
node_cgroups() { # index
  local root h
  root="$(nv "$1" CGROUP_ROOT)"
  for h in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
    if [[ "$root" == / ]]; then
      [[ -d "${h}kubepods" ]] && find "${h}kubepods" -depth -type d
    elif [[ "$h" != /sys/fs/cgroup/ ]]; then
      [[ -d "$h${root#/}" ]] && find "$h${root#/}" -depth -type d
    fi
  done
  return 0
}
node_cgroup_pids() { # index
  local cg
  for cg in $(node_cgroups "$1"); do cat "$cg/cgroup.procs" 2>/dev/null; done | sort -u
}

write_node_containerd_config() { # index
  local i="$1" ndir nrun name
  ndir="$(nv "$i" DIR)" nrun="$(nv "$i" RUN)" name="$(nv "$i" NAME)"
  mkdir -p "$ndir/containerd" "$ndir/cni/net.d" "$ndir/cni/ipam"
  cat >"$ndir/containerd/config.toml" <<EOF
# containerd of node $name of the ddp3d test cluster (written by tests/cluster/up.sh).
version = 3
root = "$ndir/containerd/root"
state = "$nrun/state"
[grpc]
  address = "$nrun/containerd.sock"
[ttrpc]
  address = "$nrun/containerd.sock.ttrpc"
[plugins.'io.containerd.grpc.v1.cri']
  # One streaming server (exec, logs, port-forward) per containerd: a free port each.
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
[plugins.'io.containerd.nri.v1.nri']
  # Not the machine-wide /var/run/nri/nri.sock: one containerd per node shares this host.
  socket_path = "$nrun/nri.sock"
[plugins.'io.containerd.cri.v1.images']
  snapshotter = "overlayfs"
[plugins.'io.containerd.cri.v1.images'.pinned_images]
  sandbox = "$PAUSE_IMAGE"
[plugins.'io.containerd.cri.v1.runtime']
  # Pod network namespaces live under the state dir, not /var/run/netns, so that
  # down.sh and node.sh poweroff know which are this node's.
  netns_mounts_under_state_dir = true
  # This machine withholds CAP_SYS_RESOURCE even from root, so runc cannot lower a
  # process's oom_score_adj below containerd's (the kubelet asks -998 for sandboxes).
  restrict_oom_score_adj = true
[plugins.'io.containerd.cri.v1.runtime'.cni]
  bin_dirs = ["$CACHE/cni"]
  conf_dir = "$ndir/cni/net.d"
  max_conf_num = 1
[plugins.'io.containerd.cri.v1.runtime'.containerd]
  default_runtime_name = "runc"
[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"
[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
  BinaryName = "$(command -v runc)"
  # runc's state (one folder per container) is this node's, in its run dir, not the
  # machine-wide /run/containerd/runc: another node's containerd never sees it.
  Root = "$nrun/runc"
  # cgroupfs: there is no systemd here to delegate cgroups to; the kubelet asks
  # containerd for this driver over CRI.
  SystemdCgroup = false
EOF
  # The CNI network: the node's bridge, one address per pod from host-local, loopback in
  # each pod. No masquerade: pod addresses are routed between the bridges as they are.
  cat >"$ndir/cni/net.d/10-ddp3d.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "$( ((i == 0)) && echo ddp3d || echo "ddp3d$i")",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$(nv "$i" BRIDGE)",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "$ndir/cni/ipam",
        "ranges": [[{"subnet": "$(nv "$i" SUBNET)", "gateway": "$(nv "$i" IP)"}]],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    }
  ]
}
EOF
}

start_node_containerd() { # index
  local i="$1" pid
  mkdir -p "$(nv "$i" RUN)" "$(nv "$i" LOGS)"
  # containerd-shim-runc-v2 and runc are found on PATH.
  start_bg pid "$(nv "$i" LOGS)/containerd.log" env PATH="$CACHE/bin:$PATH" \
    "$CACHE/bin/containerd" --config "$(nv "$i" DIR)/containerd/config.toml"
  set_nv "$i" CONTAINERD_PID "$pid"
  write_cluster_env
  wait_for "containerd of $(nv "$i" NAME)" 60 "$pid" "$(nv "$i" LOGS)/containerd.log" \
    ctr_node "$i" version
}

import_images() { # index
  local i="$1" img
  # prometheus and prometheus-config-reloader: what the Prometheus Operator
  # (prometheus_operator.sh) runs in the Prometheus pods it makes; kubectl: `helm test`.
  for img in pause busybox prometheus prometheus-config-reloader kubectl; do
    ctr_node "$i" images import --local "$CACHE/images/$img.tar" >>"$dir/logs/images.log" 2>&1 ||
      die "ctr images import $CACHE/images/$img.tar into $(nv "$i" NAME) failed (log: $dir/logs/images.log)"
  done
}

# feature gates "A=true,B=false" as a YAML flow mapping for component configs
feature_gates_yaml() {
  local kv out=()
  IFS=, read -ra kvs <<<"${CLUSTER_FEATURE_GATES:-}"
  for kv in "${kvs[@]}"; do [[ -n "$kv" ]] && out+=("${kv%%=*}: ${kv#*=}"); done
  local IFS=,
  echo "{${out[*]}}"
}

write_node_kubelet_config() { # index
  local i="$1" ndir name ip cert
  ndir="$(nv "$i" DIR)" name="$(nv "$i" NAME)" ip="$(nv "$i" IP)"
  cert="kubelet-$name"
  issue_cert "$cert" "/O=system:nodes/CN=system:node:$name" "$client_ext"
  issue_cert "$cert-serving" "/CN=system:node:$name" "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=IP:$ip,IP:127.0.0.1,DNS:$name"
  write_kubeconfig "$ndir/kubelet.kubeconfig" "$cert"
  set_nv "$i" KUBELET_PORT "$(free_port)"
  set_nv "$i" KUBELET_HEALTHZ_PORT "$(free_port)"
  mkdir -p "$ndir/kubelet"
  {
    cat <<EOF
# kubelet of node $name of the ddp3d test cluster (written by tests/cluster/up.sh).
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# This machine has cgroups v1, which kubelet 1.35+ refuses unless told otherwise.
failCgroupV1: false
failSwapOn: false
cgroupDriver: cgroupfs
cgroupRoot: $(nv "$i" CGROUP_ROOT)
containerRuntimeEndpoint: unix://$(nv "$i" CONTAINERD_SOCK)
address: $ip
port: $(nv "$i" KUBELET_PORT)
healthzBindAddress: 127.0.0.1
healthzPort: $(nv "$i" KUBELET_HEALTHZ_PORT)
readOnlyPort: 0
tlsCertFile: $dir/pki/$cert-serving.crt
tlsPrivateKeyFile: $dir/pki/$cert-serving.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $dir/pki/ca.crt}
authorization:
  mode: Webhook
clusterDomain: cluster.local
clusterDNS: [$GATEWAY]
resolvConf: $ndir/kubelet/resolv.conf
# A shared build machine: evict only when the disk is nearly full. Absolute sizes, not
# percentages: 2 % of a 250 GB shared disk is 5 GB, which other jobs' builds leave free often
# enough for a DiskPressure taint to hold pods Pending for no reason of the test's.
evictionHard: {memory.available: "100Mi", nodefs.available: "1Gi", imagefs.available: "1Gi", nodefs.inodesFree: "1%"}
imageGCHighThresholdPercent: 100
serializeImagePulls: false
volumePluginDir: $ndir/kubelet/volume-plugins
podLogsDir: $ndir/kubelet/pod-logs
EOF
    if [[ -n "${NODE_MONITOR_GRACE_PERIOD:-}" ]]; then
      cat <<EOF
# Quick node-loss detection (kube-controller-manager --node-monitor-grace-period=$NODE_MONITOR_GRACE_PERIOD):
# the lease is renewed every nodeLeaseDurationSeconds/4 = 5 s, four times per grace period.
nodeLeaseDurationSeconds: 20
nodeStatusUpdateFrequency: 5s
EOF
    fi
    [[ -n "${CLUSTER_FEATURE_GATES:-}" ]] && echo "featureGates: $(feature_gates_yaml)"
  } >"$ndir/kubelet/config.yaml"
  # Upstream resolvers for dnsPolicy: Default pods: none is reachable from pods here.
  : >"$ndir/kubelet/resolv.conf"
}

start_node_kubelet() { # index
  local i="$1" ndir pid
  ndir="$(nv "$i" DIR)"
  mkdir -p "$(nv "$i" LOGS)"
  start_bg pid "$(nv "$i" LOGS)/kubelet.log" "$CACHE/bin/kubelet" \
    --config "$ndir/kubelet/config.yaml" --kubeconfig "$ndir/kubelet.kubeconfig" \
    --root-dir "$ndir/kubelet" --hostname-override "$(nv "$i" NAME)" --node-ip "$(nv "$i" IP)" -v 1
  set_nv "$i" KUBELET_PID "$pid"
  set_nv "$i" POWER on
  write_cluster_env
}

node_ready() { # index
  [[ "$(kubectl_admin get node "$(nv "$1" NAME)" \
    -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" == True ]]
}

# Extended resources on a node (what a device plugin or an administrator advertises):
# a merge PATCH of the node's status subresource. Allocatable is patched alongside so
# that the scheduler sees it at once; the kubelet's next status update computes the same.
# "KEY=N" sets, "KEY-" removes.
apply_capacity() { # index spec...
  local i="$1" s patch="" sep=""
  shift
  for s in "$@"; do
    if [[ "$s" == *- ]]; then
      patch+="$sep\"${s%-}\":null"
    else
      patch+="$sep\"${s%%=*}\":\"${s#*=}\""
    fi
    sep=,
  done
  [[ -n "$patch" ]] || return 0
  kubectl_admin patch node "$(nv "$i" NAME)" --subresource=status --type=merge \
    -p "{\"status\":{\"capacity\":{$patch},\"allocatable\":{$patch}}}" >/dev/null
}
valid_capacity_spec() { # spec — KEY=N or KEY-, KEY an extended resource name
  [[ "$1" =~ ^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)(=[0-9]+|-)$ ]] &&
    [[ "${BASH_REMATCH[1]}" != *kubernetes.io/* ]]
}
# The node's recorded extended resources (comma-separated KEY=N) updated by SPEC...
merge_capacity() { # current spec...
  local cur="$1" s k out=() e
  shift
  IFS=, read -ra have <<<"$cur"
  for e in "${have[@]}"; do
    [[ -n "$e" ]] || continue
    k="${e%%=*}"
    for s in "$@"; do [[ "${s%-}" == "$k" || "${s%%=*}" == "$k" ]] && continue 2; done
    out+=("$e")
  done
  for s in "$@"; do [[ "$s" == *- ]] || out+=("$s"); done
  local IFS=,
  echo "${out[*]}"
}
