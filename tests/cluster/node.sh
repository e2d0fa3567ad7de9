#!/usr/bin/env bash
# Node faults and node state for the cluster that up.sh DIR started:
#
#   node.sh DIR list                      one line per node: NAME IP SUBNET POWER CAPACITY
#   node.sh DIR poweroff NODE             power loss: SIGKILL the node's kubelet, containerd,
#                                         shims and every process in its pod cgroups at
#                                         once; its mounts, pod network namespaces and
#                                         veths vanish, its bridge goes down without its
#                                         address (its subnet falls into the blackhole
#                                         route), its run dir is cleared. Nothing is told
#                                         to the API server.
#   node.sh DIR poweron NODE              boot: bridge address back, containerd and kubelet
#                                         from the same config and on-disk state (kubelet
#                                         root dir, containerd root, CNI IPAM), wait for
#                                         Ready, advertise its extended resources again
#   node.sh DIR drain NODE [FLAG...]      kubectl drain --ignore-daemonsets
#                                         --delete-emptydir-data --timeout=120s [FLAG...]
#                                         (e.g. --force for pods without a controller)
#   node.sh DIR uncordon NODE             kubectl uncordon
#   node.sh DIR capacity NODE KEY=N|KEY-...
#                                         advertise (or with KEY- withdraw) extended
#                                         resources in the node's status; poweron applies
#                                         them again, as a device plugin re-registers
#
# Node 0 (10.88.0.1: kube-apiserver, CoreDNS, kube-proxy's node) cannot be powered off.
# poweroff of a node that is off, or poweron of one that is on, says so and exits 0.
# Env: NODE_READY_TIMEOUT (poweron, default 180 s), DRAIN_TIMEOUT (default 120s).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"
die() { echo "node.sh: $*" >&2; exit 1; }
log() { echo "node.sh: $*" >&2; }

usage() { sed -n '2,29p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
dir="${1:-}" cmd="${2:-}"
[[ -n "$dir" && -n "$cmd" ]] || usage
[[ -f "$dir/cluster.env" ]] || die "no cluster in $dir ($dir/cluster.env not found): start one with up.sh $dir"
dir="$(cd "$dir" && pwd)"
cluster_paths "$dir"
load_cluster_env
load_control_plane_env
shift 2

# One node operation at a time per cluster (they rewrite cluster.env).
exec 9>>"$dir/.node.lock"
flock -w 600 9 || die "another node.sh on $dir holds $dir/.node.lock"
# Re-read under the lock: a poweron that ran meanwhile changed the PIDs.
load_cluster_env

node_arg() { # name — sets idx, or dies naming the nodes that exist
  [[ -n "${1:-}" ]] || die "$cmd: which node? nodes: $(node_names | paste -sd' ' -)"
  idx="$(node_index "$1")" ||
    die "no node '$1' in the cluster in $dir; its nodes: $(node_names | paste -sd' ' -)"
}

node_processes() { # index — kubelet, containerd, shims of the node, and its pod processes
  local i="$1" ndir nrun p cmdl
  ndir="$(nv "$i" DIR)" nrun="$(nv "$i" RUN)"
  for p in /proc/[0-9]*; do
    p="${p#/proc/}"
    [[ "$p" == "$$" || "$p" == "$BASHPID" ]] && continue
    cmdl=" $({ tr '\0' ' ' <"/proc/$p/cmdline"; } 2>/dev/null)"
    [[ "$cmdl" == *" $ndir/"* || "$cmdl" == *" $nrun/"* ]] && echo "$p"
  done
  node_cgroup_pids "$i"
}

powered_on() { # index — its kubelet or containerd still runs
  owns "$(nv "$1" KUBELET_PID)" "$dir" || owns "$(nv "$1" CONTAINERD_PID)" "$dir"
}

cmd_list() {
  local i
  for ((i = 0; i < NODE_COUNT; i++)); do
    printf '%s %s %s %s %s\n' "$(nv "$i" NAME)" "$(nv "$i" IP)" "$(nv "$i" SUBNET)" \
      "$(nv "$i" POWER)" "$(nv "$i" CAPACITY)"
  done
}

cmd_poweroff() {
  [[ $# -eq 1 ]] || die "usage: node.sh DIR poweroff NODE"
  node_arg "$1"
  local i="$idx" name br t0=$EPOCHREALTIME pids n first=""
  name="$(nv "$i" NAME)" br="$(nv "$i" BRIDGE)"
  if ((i == 0)); then
    ((NODE_COUNT > 1)) || die "$name is the control-plane node and the only one (kube-apiserver, CoreDNS and kube-proxy live on its address $(nv 0 IP)); start the cluster with up.sh DIR --nodes N to power nodes off"
    die "$name is the control-plane node: kube-apiserver, CoreDNS and kube-proxy live on its address $(nv 0 IP); power off one of: $(node_names | tail -n +2 | paste -sd' ' -)"
  fi
  if [[ "$(nv "$i" POWER)" == off ]] && ! powered_on "$i"; then
    log "$name is already powered off; nothing done"
    return 0
  fi
  # The network goes first, as in a power cut: nothing the dying processes send (the FIN or
  # RST of every socket the kernel closes for them) reaches a peer, and every later packet to
  # the node's addresses is dropped without an answer (its subnet falls into the blackhole
  # route), so peers see silence, not a closed connection.
  local l
  for l in $(ip -o link show master "$br" 2>/dev/null | awk -F': ' '{ print $2 }' | cut -d@ -f1); do
    ip link set "$l" down 2>/dev/null || true
  done
  ip addr flush dev "$br" 2>/dev/null || true
  ip link set "$br" down 2>/dev/null || true
  # All at once, then again for what a dying shim or a container forked meanwhile.
  for ((n = 0; n < 50; n++)); do
    pids="$(node_processes "$i" | sort -u | tr '\n' ' ')"
    [[ -n "${pids// /}" ]] || break
    [[ -n "$first" ]] || first="$pids"
    # shellcheck disable=SC2086
    kill -KILL $pids 2>/dev/null || true
    sleep 0.1
  done
  [[ -z "$(node_processes "$i")" ]] || die "processes of $name survive SIGKILL: $(node_processes "$i" | tr '\n' ' ')"
  # What does not survive a power cut: every mount (pod netns bind mounts under the run
  # dir, the kubelet's tmpfs volumes and its rshared bind of its root dir, container
  # rootfs overlays), so the pods' network namespaces and their veths are gone; the run
  # dir; the pod cgroups; the NIC's link and address.
  unmount_under "$(nv "$i" DIR)" "$(nv "$i" RUN)"
  for l in $(ip -o link show master "$br" 2>/dev/null | awk -F': ' '{ print $2 }' | cut -d@ -f1); do
    ip link del "$l" 2>/dev/null || true
  done
  ip addr flush dev "$br" 2>/dev/null || true
  ip link set "$br" down 2>/dev/null || true
  rm -rf "$(nv "$i" RUN)"
  local cg
  for cg in $(node_cgroups "$i"); do
    [[ "/${cg#/sys/fs/cgroup/*/}" == "$(nv "$i" CGROUP_ROOT)" ]] || rmdir "$cg" 2>/dev/null || true
  done
  clean_stale_shim_sockets
  set_nv "$i" KUBELET_PID "" ; set_nv "$i" CONTAINERD_PID ""; set_nv "$i" POWER off
  write_cluster_env
  local ms=$(((${EPOCHREALTIME/./} - ${t0/./}) / 1000))
  log "$name powered off in ${ms} ms ($(wc -w <<<"$first") processes SIGKILLed at once; its pods' addresses in $(nv "$i" SUBNET) are unreachable)"
}

ready_since() { # index epoch — Ready=True, posted by a kubelet started after EPOCH
  local out status hb
  out="$(kubectl_admin get node "$(nv "$1" NAME)" \
    -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status} {.status.conditions[?(@.type=="Ready")].lastHeartbeatTime}' 2>/dev/null)" || return 1
  status="${out%% *}" hb="${out#* }"
  [[ "$status" == True ]] && (($(date -d "$hb" +%s) >= $2))
}

cmd_poweron() {
  [[ $# -eq 1 ]] || die "usage: node.sh DIR poweron NODE"
  node_arg "$1"
  local i="$idx" name t0=$SECONDS since
  name="$(nv "$i" NAME)"
  if powered_on "$i"; then
    log "$name is already powered on (kubelet pid $(nv "$i" KUBELET_PID), containerd pid $(nv "$i" CONTAINERD_PID)); nothing done"
    return 0
  fi
  [[ -f "$(nv "$i" DIR)/kubelet/config.yaml" && -f "$(nv "$i" DIR)/containerd/config.toml" ]] ||
    die "$name has no kubelet/containerd config under $(nv "$i" DIR): was it started by up.sh?"
  [[ -n "$(node_processes "$i")" ]] && die "$name is half up (processes $(node_processes "$i" | tr '\n' ' ')): power it off first"
  since=$(date +%s)
  node_bridge_up "$i"
  node_cgroup_up "$i"
  start_node_containerd "$i"
  start_node_kubelet "$i"
  wait_for "node $name Ready again" "${NODE_READY_TIMEOUT:-180}" "$(nv "$i" KUBELET_PID)" \
    "$(nv "$i" LOGS)/kubelet.log" ready_since "$i" "$since"
  # A kubelet that registers again zeroes extended resources it does not manage (no
  # device-plugin checkpoint): advertise them again, as a device plugin re-registers.
  local caps=()
  IFS=, read -ra caps <<<"$(nv "$i" CAPACITY)"
  if ((${#caps[@]})); then
    local first="${caps[0]%%=*}"
    log "$name registered again with $first=$(allocatable_of "$i" "$first" || true) in allocatable; advertising $(nv "$i" CAPACITY)"
    apply_capacity "$i" "${caps[@]}"
    wait_capacity "$i" "${caps[@]}"
  fi
  log "$name powered on: Ready in $((SECONDS - t0)) s${caps:+, capacity $(nv "$i" CAPACITY)}"
}

allocatable_of() { # index key
  local k="${2//./\\.}"
  kubectl_admin get node "$(nv "$1" NAME)" -o "jsonpath={.status.allocatable.$k}" 2>/dev/null
}
wait_capacity() { # index spec... — until allocatable shows each
  local i="$1" s deadline=$((SECONDS + 60))
  shift
  for s in "$@"; do
    while :; do
      if [[ "$s" == *- ]]; then
        [[ -z "$(allocatable_of "$i" "${s%-}")" ]] && break
      else
        [[ "$(allocatable_of "$i" "${s%%=*}")" == "${s#*=}" ]] && break
      fi
      ((SECONDS < deadline)) || die "$(nv "$i" NAME): allocatable does not show $s after 60 s"
      sleep 0.5
    done
  done
}

cmd_capacity() {
  [[ $# -ge 2 ]] || die "usage: node.sh DIR capacity NODE KEY=N|KEY-... (e.g. example.com/gpu=2)"
  node_arg "$1"
  shift
  local i="$idx" s
  for s in "$@"; do
    valid_capacity_spec "$s" ||
      die "$s: want KEY=N (N a whole number) or KEY- to withdraw, KEY an extended resource name outside kubernetes.io (e.g. example.com/gpu=2)"
  done
  set_nv "$i" CAPACITY "$(merge_capacity "$(nv "$i" CAPACITY)" "$@")"
  write_cluster_env
  if [[ "$(nv "$i" POWER)" == off ]]; then
    log "$(nv "$i" NAME) is powered off: its capacity ($(nv "$i" CAPACITY)) is advertised at poweron"
    return 0
  fi
  apply_capacity "$i" "$@"
  wait_capacity "$i" "$@"
  log "$(nv "$i" NAME): allocatable $(nv "$i" CAPACITY)"
}

cmd_drain() {
  [[ $# -ge 1 ]] || die "usage: node.sh DIR drain NODE [kubectl drain flags...]"
  node_arg "$1"
  shift
  kubectl_admin drain "$(nv "$idx" NAME)" --ignore-daemonsets --delete-emptydir-data \
    --timeout="${DRAIN_TIMEOUT:-120s}" "$@"
}

cmd_uncordon() {
  [[ $# -eq 1 ]] || die "usage: node.sh DIR uncordon NODE"
  node_arg "$1"
  kubectl_admin uncordon "$(nv "$idx" NAME)"
}

case "$cmd" in
list) cmd_list "$@" ;;
poweroff) cmd_poweroff "$@" ;;
poweron) cmd_poweron "$@" ;;
capacity) cmd_capacity "$@" ;;
drain) cmd_drain "$@" ;;
uncordon) cmd_uncordon "$@" ;;
-h|--help|help) usage ;;
*) die "unknown command '$cmd' (list, poweroff, poweron, drain, uncordon, capacity)" ;;
esac
